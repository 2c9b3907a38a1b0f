//go:build !nomcp

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/basis-go/basis/approver/terminal"
	"github.com/basis-go/basis/contract/display"
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
	// mu asks one question at a time.
	mu sync.Mutex
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
	decline := &mcp.ElicitResult{Action: "decline"}
	form, err := readForm(p.RequestedSchema)
	if p.Mode == "url" {
		err = nil
	}
	if err != nil {
		return decline, nil
	}
	if el.mode == elicitDefaults {
		if p.Mode == "url" {
			// Nobody is there to open it.
			return decline, nil
		}
		content, ok := form.defaults()
		if !ok {
			return decline, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	tty, err := el.open()
	if err != nil {
		return decline, nil
	}
	defer tty.Close()
	a := &asker{ctx: ctx, tty: tty, in: bufio.NewReader(deadlineReader{ctx, tty})}
	if p.Mode == "url" {
		return el.askURL(a, server, p)
	}
	return a.askForm(server, p.Message, form), nil
}

// open opens the terminal, refusing what is no terminal.
func (el *elicitor) open() (*os.File, error) {
	path := el.tty
	if path == "" {
		path = terminal.DefaultTTY
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// askURL shows the URL a server wants the person to visit and asks
// whether to open it; yes opens it with $BROWSER when that is set.
func (el *elicitor) askURL(a *asker, server string, p *mcp.ElicitParams) (mcp.InputResponse, error) {
	a.printf("\nbasis: MCP server %s asks you to open a page:\n", display.Escape(server))
	if p.Message != "" {
		a.printf("  %s\n", display.Escape(p.Message))
	}
	a.printf("  %s\n", display.Escape(p.URL))
	yes, err := a.yesNo("  open it? [y/N] ", false)
	if err != nil {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	if !yes {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	if browser := lookup(el.environ, "BROWSER"); browser != "" && !strings.ContainsAny(p.URL, "\x00\n\r") {
		// The URL is one argument, never a shell's input.
		cmd := exec.Command(browser, p.URL)
		if err := cmd.Start(); err == nil {
			go cmd.Wait()
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
	}
	a.printf("  open it in your browser, then come back\n")
	return &mcp.ElicitResult{Action: "accept"}, nil
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

// field is one property of an elicitation form: the flat object of
// primitives the protocol allows.
type field struct {
	Name        string
	Title       string
	Description string
	Type        string // string, integer, number, boolean, or array (multi-select)
	Choices     []string
	Default     any
	Required    bool
}

// form is a requested schema's fields, in the order the schema lists
// them.
type form []field

// readForm reads a requested schema; what is not a flat object of
// primitives is an error (the form is declined).
func readForm(schema any) (form, error) {
	data, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not an object")
	}
	names, err := keysInOrder(s.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
		OneOf       []struct {
			Const string `json:"const"`
		} `json:"oneOf"`
		Items *struct {
			Enum  []string `json:"enum"`
			AnyOf []struct {
				Const string `json:"const"`
			} `json:"anyOf"`
		} `json:"items"`
		Default any `json:"default"`
	}
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, err
		}
	}
	var f form
	for _, name := range names {
		p := props[name]
		fd := field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default,
			Required: slices.Contains(s.Required, name), Choices: p.Enum}
		for _, o := range p.OneOf {
			fd.Choices = append(fd.Choices, o.Const)
		}
		if p.Items != nil {
			fd.Choices = append(fd.Choices, p.Items.Enum...)
			for _, o := range p.Items.AnyOf {
				fd.Choices = append(fd.Choices, o.Const)
			}
		}
		switch fd.Type {
		case "string", "integer", "number", "boolean":
		case "array":
			if len(fd.Choices) == 0 {
				return nil, fmt.Errorf("field %s: an array without choices", name)
			}
		default:
			return nil, fmt.Errorf("field %s: type %q is no form field", name, fd.Type)
		}
		f = append(f, fd)
	}
	return f, nil
}

// keysInOrder lists an object's keys as written.
func keysInOrder(obj json.RawMessage) ([]string, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// defaults is the form filled with its defaults; false when a required
// field has none.
func (f form) defaults() (map[string]any, bool) {
	content := map[string]any{}
	for _, fd := range f {
		if fd.Default != nil {
			content[fd.Name] = fd.Default
		} else if fd.Required {
			return nil, false
		}
	}
	return content, true
}

// asker reads answers at a terminal, a line at a time (the terminal stays
// in its own, line-editing mode).
type asker struct {
	ctx context.Context
	tty io.Writer
	in  *bufio.Reader
}

// printf writes to the terminal, with "\n" as the terminal wants it.
func (a *asker) printf(format string, args ...any) {
	fmt.Fprintf(a.tty, format, args...)
}

// line reads one line; io.EOF when the person pressed Ctrl-D.
func (a *asker) line() (string, error) {
	s, err := a.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// yesNo asks a yes/no question; an empty line is def.
func (a *asker) yesNo(question string, def bool) (bool, error) {
	for {
		a.printf("%s", question)
		s, err := a.line()
		if err != nil {
			return false, err
		}
		if v, ok := parseBool(s); ok {
			return v, nil
		}
		if s == "" {
			return def, nil
		}
	}
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "y", "yes", "true":
		return true, true
	case "n", "no", "false":
		return false, true
	}
	return false, false
}

// maxTries is how often a field is asked again after an answer it cannot
// take before the form is declined.
const maxTries = 3

// askForm shows the form, field by field, and returns the person's
// answer: accept with the content, decline, or cancel (Ctrl-D, or the
// call ended).
func (a *asker) askForm(server, message string, f form) *mcp.ElicitResult {
	cancel := &mcp.ElicitResult{Action: "cancel"}
	a.printf("\nbasis: MCP server %s asks:\n", display.Escape(server))
	if message != "" {
		a.printf("  %s\n", display.Escape(message))
	}
	a.printf("  (Enter keeps the value in brackets; Ctrl-D cancels)\n")
	content := map[string]any{}
	for _, fd := range f {
		v, err := a.askField(fd)
		if err != nil {
			if errors.Is(err, errTooManyTries) {
				a.printf("  declined\n")
				return &mcp.ElicitResult{Action: "decline"}
			}
			a.printf("\n  cancelled\n")
			return cancel
		}
		if v != nil {
			content[fd.Name] = v
		}
	}
	send, err := a.yesNo(fmt.Sprintf("  send these answers to %s? [Y/n] ", display.Escape(server)), true)
	if err != nil {
		a.printf("\n  cancelled\n")
		return cancel
	}
	if !send {
		a.printf("  declined\n")
		return &mcp.ElicitResult{Action: "decline"}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

var errTooManyTries = errors.New("no answer the form takes")

// askField asks one field until its answer fits; nil is no value (an
// optional field left empty).
func (a *asker) askField(fd field) (any, error) {
	label := fd.Name
	if fd.Title != "" {
		label = fd.Title + " (" + fd.Name + ")"
	}
	var notes []string
	if fd.Required {
		notes = append(notes, "required")
	}
	switch {
	case fd.Type == "array":
		notes = append(notes, "any of: "+strings.Join(fd.Choices, ", ")+"; separate with commas")
	case len(fd.Choices) > 0:
		notes = append(notes, "one of: "+strings.Join(fd.Choices, ", "))
	case fd.Type == "boolean":
		notes = append(notes, "yes or no")
	default:
		notes = append(notes, fd.Type)
	}
	prompt := "  " + display.Escape(label) + " (" + display.Escape(strings.Join(notes, "; ")) + ")"
	if fd.Description != "" {
		prompt += "\n    " + display.Escape(fd.Description)
	}
	if fd.Default != nil {
		def, _ := json.Marshal(fd.Default)
		prompt += " [" + display.Escape(string(def)) + "]"
	}
	prompt += ": "
	for range maxTries {
		a.printf("%s", prompt)
		s, err := a.line()
		if err != nil {
			return nil, err
		}
		if s == "" {
			if fd.Default != nil {
				return fd.Default, nil
			}
			if !fd.Required {
				return nil, nil
			}
			a.printf("  a value is required\n")
			continue
		}
		v, err := fd.parse(s)
		if err == nil {
			return v, nil
		}
		a.printf("  %v\n", err)
	}
	return nil, errTooManyTries
}

// parse reads s as the field's value.
func (fd field) parse(s string) (any, error) {
	switch {
	case fd.Type == "array":
		var out []string
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if !slices.Contains(fd.Choices, part) {
				return nil, fmt.Errorf("%q is not one of the choices", part)
			}
			out = append(out, part)
		}
		return out, nil
	case len(fd.Choices) > 0:
		if !slices.Contains(fd.Choices, s) {
			return nil, fmt.Errorf("want one of: %s", strings.Join(fd.Choices, ", "))
		}
		return s, nil
	case fd.Type == "boolean":
		if v, ok := parseBool(s); ok {
			return v, nil
		}
		return nil, errors.New("want yes or no")
	case fd.Type == "integer":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("want a whole number")
		}
		return v, nil
	case fd.Type == "number":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("want a number")
		}
		return v, nil
	}
	return s, nil
}

// deadlineReader reads f until ctx is done: a call that ends (or a
// signal) must not leave basis waiting at the terminal.
type deadlineReader struct {
	ctx context.Context
	f   *os.File
}

func (r deadlineReader) Read(p []byte) (int, error) {
	stop := context.AfterFunc(r.ctx, func() { _ = r.f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	n, err := r.f.Read(p)
	if r.ctx.Err() != nil && n == 0 {
		return 0, r.ctx.Err()
	}
	return n, err
}
