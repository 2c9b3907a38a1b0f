// Command ticket files a ticket by appending it to tickets/tickets.jsonl in
// the workspace — a stand-in for a ticket system on the network, which is
// why its manifest entry says side_effect "external" and every call needs
// an approval. Its input is one JSON object on stdin:
// {"title": "...", "body": "...", "priority": "low|normal|high"}.
// The queue comes from the TICKET_QUEUE environment variable, which the
// manifest sets.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

type input struct {
	Title    string `json:"title"`
	Body     string `json:"body"`
	Priority string `json:"priority"`
}

type ticket struct {
	ID       int       `json:"id"`
	Queue    string    `json:"queue"`
	Title    string    `json:"title"`
	Body     string    `json:"body,omitempty"`
	Priority string    `json:"priority"`
	Filed    time.Time `json:"filed"`
}

const ledger = "tickets/tickets.jsonl"

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail("the input is not a JSON object: %v", err)
	}
	if in.Title == "" {
		fail("a ticket needs a title")
	}
	if in.Priority == "" {
		in.Priority = "normal"
	}
	queue := os.Getenv("TICKET_QUEUE")
	if queue == "" {
		fail("TICKET_QUEUE is not set; the manifest's env sets it")
	}
	if err := os.MkdirAll(filepath.Dir(ledger), 0o755); err != nil {
		fail("cannot create %s: %v", filepath.Dir(ledger), err)
	}
	f, err := os.OpenFile(ledger, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail("cannot open %s: %v", ledger, err)
	}
	defer f.Close()
	id := 1
	for s := bufio.NewScanner(f); s.Scan(); {
		id++
	}
	t := ticket{ID: id, Queue: queue, Title: in.Title, Body: in.Body, Priority: in.Priority, Filed: time.Now().UTC()}
	line, _ := json.Marshal(t)
	if _, err := f.Write(append(line, '\n')); err != nil {
		fail("cannot write %s: %v", ledger, err)
	}
	fmt.Fprintf(os.Stderr, "appended to %s\n", ledger)
	fmt.Printf("filed ticket #%d in queue %s: %s (%s priority)\n", t.ID, t.Queue, t.Title, t.Priority)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
