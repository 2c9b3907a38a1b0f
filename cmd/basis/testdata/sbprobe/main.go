// Command sbprobe tries one thing a sandbox may forbid and says how it
// went: "ok: ..." and exit 0, or the error and exit 1. Its arguments come
// from the command line (a spawn command) or, when there are none, from
// {"args": [...]} on stdin (a declared tool).
//
//	sbprobe write PATH      write a file
//	sbprobe connect ADDR    open a TCP connection
//	sbprobe tmpdir          write a file in $TMPDIR and print $TMPDIR
//	sbprobe cache NAME      write NAME in $XDG_CACHE_HOME and print its path
//	sbprobe child ARGS...   run sbprobe ARGS... as a child and relay it
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		var in struct {
			Args []string `json:"args"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
			fmt.Println("reading the input:", err)
			os.Exit(2)
		}
		args = in.Args
	}
	if err := probe(args); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}

func probe(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: sbprobe write PATH | connect ADDR | tmpdir | cache NAME | child ARGS...")
	}
	switch args[0] {
	case "write":
		if err := os.WriteFile(args[1], []byte("written by sbprobe\n"), 0o644); err != nil {
			return err
		}
		fmt.Println("ok: wrote", args[1])
	case "connect":
		conn, err := net.DialTimeout("tcp", args[1], 5*time.Second)
		if err != nil {
			return err
		}
		conn.Close()
		fmt.Println("ok: connected to", args[1])
	case "tmpdir":
		dir := os.Getenv("TMPDIR")
		if err := os.WriteFile(filepath.Join(dir, "probe"), []byte("x"), 0o644); err != nil {
			return err
		}
		fmt.Println("ok: " + dir)
	case "cache":
		path := filepath.Join(os.Getenv("XDG_CACHE_HOME"), args[1])
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			return err
		}
		fmt.Println("ok: " + path)
	case "child":
		self, err := os.Executable()
		if err != nil {
			return err
		}
		child := exec.Command(self, args[1:]...)
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		return child.Run()
	default:
		return fmt.Errorf("unknown probe %q", args[0])
	}
	return nil
}
