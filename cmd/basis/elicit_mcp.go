//go:build !nomcp

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/mcpbind"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errSampling is basis's answer to a sampling request: it has no model.
var errSampling = errors.New("basis declined the sampling request: basis has no model to ask")

// elicitor answers a server's questions during `basis call`, as its mode
// says.
type elicitor struct {
	mode elicitMode
	// tty is the terminal a prompt asks at ("" is /dev/tty).
	tty string
	// environ holds BROWSER, which opens a URL the person agreed to open.
	environ []string

	// term asks at tty, one question at a time; once sets it up.
	once sync.Once
	term *terminal.Terminal
}

// serverRequest is the elicitor as mcpbind's ServerRequest; nil in
// decline mode, where basis declares no elicitation at all.
func (el *elicitor) serverRequest() mcpbind.ServerRequestFunc {
	if el.mode == elicitDecline {
		return nil
	}
	return el.answer
}

// answer answers one request of server.
func (el *elicitor) answer(ctx context.Context, server string, req mcp.InputRequest) (mcp.InputResponse, error) {
	p, ok := req.(*mcp.ElicitParams)
	if !ok {
		return nil, errSampling
	}
	if p.Mode == "url" {
		if el.mode == elicitDefaults {
			// Nobody is there to open it.
			return &mcp.ElicitResult{Action: string(terminal.FormDecline)}, nil
		}
		// Answered whatever happened: a question basis could not ask is
		// declined.
		action, _ := el.terminal().AskURL(ctx, server, p.Message, p.URL, el.openURL)
		return &mcp.ElicitResult{Action: string(action)}, nil
	}
	schema, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return &mcp.ElicitResult{Action: string(terminal.FormDecline)}, nil
	}
	var a terminal.FormAnswer
	if el.mode == elicitDefaults {
		a, _ = terminal.FormDefaults(schema)
	} else {
		a, _ = el.terminal().AskForm(ctx, server, p.Message, schema)
	}
	return &mcp.ElicitResult{Action: string(a.Action), Content: a.Content}, nil
}

// terminal is where a prompt asks: a fresh open of the terminal for each
// question, one question at a time.
func (el *elicitor) terminal() *terminal.Terminal {
	el.once.Do(func() { el.term = &terminal.Terminal{Path: el.tty} })
	return el.term
}

// openURL opens a page the person agreed to open with $BROWSER, when that
// is set.
func (el *elicitor) openURL(url string) error {
	browser := lookup(el.environ, "BROWSER")
	if browser == "" || strings.ContainsAny(url, "\x00\n\r") {
		return errors.New("no browser to open it")
	}
	// The URL is one argument, never a shell's input.
	cmd := exec.Command(browser, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// lookup is name's value in environ.
func lookup(environ []string, name string) string {
	for _, kv := range slices.Backward(environ) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
