//go:build unix

// Package testserver is an MCP server for mcpbind's tests: tools that
// answer, fail, report progress, crash, leak a variable, change the tool
// list, and options for paging and awkward names. The same server runs
// in-process (over in-memory or HTTP transports) and as a program
// (cmd/mcptestserver, over stdio).
package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server.
type Options struct {
	// PageSize is the most tools one tools/list page holds; 0 is the
	// SDK's default.
	PageSize int
	// Extra adds tools extra00, extra01, ... that echo.
	Extra int
	// LongName adds a tool whose name is 200 characters.
	LongName bool
	// Collide adds tools "a.b" and "a_b", which sanitise to one name.
	Collide bool
	// Bidi adds the tool BidiToolName, whose title and description hold
	// bidirectional controls and an escape sequence too.
	Bidi bool
	// Exit ends the process for the crash tool; nil makes crash a
	// protocol error.
	Exit func(code int)
	// Stderr is where the crash and leak tools write.
	Stderr io.Writer
	// Big adds the tool big, which returns as much text as it is asked
	// for, and an image.
	Big bool
	// Names adds a tool that echoes under each of these names.
	Names []string
	// OnCall, when set, is told the name of every tool called.
	OnCall func(tool string)
	// Environ adds the tool environ, which answers with the process's
	// working directory and whole environment, for tests of what a
	// server inherits and where it runs.
	Environ bool
	// Surfaces, when not empty, adds resources, a resource template, a
	// prompt and completions, each text saying Surfaces (so a test tells
	// two servers apart), subscriptions, the tools ask and sample,
	// which ask the client during the call, and change, which changes
	// the prompts or resources or says a resource was updated, and the
	// tools and prompt of inputrequired.go, which ask through
	// input-required results.
	Surfaces string
	// TraceContext adds the tool "tracecontext", which returns the
	// traceparent and tracestate its call's _meta held.
	TraceContext bool
	// CallIDs, when set, is where the server's transport writes down the
	// id of each tools/call ([CallIDs.Transport]); the tool tracecontext
	// then also reports the id of its call, as " id=" and [CallIDs.Last].
	CallIDs *CallIDs
}

// BidiToolName is the tool Bidi adds: a name that a right-to-left
// override, isolates, invisible characters and an escape sequence would
// make read as another.
const BidiToolName = "list\u202eeteled\u2066\u2069\u200b\u200e\u200f\ufeff\x1b[2K"

// LongToolName is the 200-character tool name LongName adds.
var LongToolName = strings.Repeat("long", 50)

// New returns the server.
func New(opts Options) *mcp.Server {
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	so := &mcp.ServerOptions{
		PageSize: opts.PageSize,
		Logger:   slog.New(slog.DiscardHandler),
	}
	if opts.Surfaces != "" {
		surfaceOptions(so, opts.Surfaces)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, so)
	if opts.Surfaces != "" {
		addSurfaces(s, opts.Surfaces)
	}
	object := json.RawMessage(`{"type":"object"}`)
	add := func(name, desc string, ann *mcp.ToolAnnotations, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: object, Annotations: ann}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if opts.OnCall != nil {
				opts.OnCall(name)
			}
			return h(ctx, req)
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("echo " + string(req.Params.Arguments)), nil
	}
	add("echo", "Echoes its arguments.", &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}, echo)
	add("fail", "Always reports an error.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke: no such ticket"}}}, nil
	})
	add("progress", "Reports progress three times.", nil, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
		}
		return text("done"), nil
	})
	add("crash", "Exits in the middle of the call.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if opts.Exit == nil {
			return nil, fmt.Errorf("crash is not available in-process")
		}
		fmt.Fprintln(opts.Stderr, "fatal: the crash tool was called")
		opts.Exit(7)
		return nil, nil
	})
	add("leak", "Writes the variable its argument names to stderr and returns it as an error.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		v := os.Getenv(in.Name)
		fmt.Fprintln(opts.Stderr, "leaking "+v)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the value is " + v}}}, nil
	})
	add("header", "Returns the value the server received in the header its argument names.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if req.Extra == nil || req.Extra.Header == nil {
			return text("no headers"), nil
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "got " + req.Extra.Header.Get(in.Name)}}}, nil
	})
	if opts.TraceContext {
		add("tracecontext", "Returns the traceparent and tracestate of the call's _meta.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			meta := req.Params.GetMeta()
			s := fmt.Sprintf("traceparent=%v tracestate=%v", meta["traceparent"], meta["tracestate"])
			if opts.CallIDs != nil {
				s += " id=" + opts.CallIDs.Last()
			}
			return text(s), nil
		})
	}
	add("protoerr", "Answers with a protocol error, as Go servers report bad input.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("invalid params: ticket id must be a number")
	})
	add("image", "Returns an image.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)}}}, nil
	})
	add("structured", "Returns structured content only.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"n": 1, "ok": true}}, nil
	})
	add("mixed", "Returns every kind of content, structured content and _meta; with error, as an isError result; with name, the value of that variable in its text.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Error bool
			Name  string
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return MixedResult(in.Error, os.Getenv(in.Name)), nil
	})
	add("sleep", "Sleeps for the milliseconds its argument gives.", nil, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ MS int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
		}
		return text("slept"), nil
	})
	add("grow", "Adds the tool grown, which changes the tool list.", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		add("grown", "Added by grow.", nil, echo)
		return text("grown"), nil
	})
	if opts.Environ {
		add("environ", "Returns the server's working directory and environment; with write, first tries to write that file.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			dir, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			out := "cwd=" + dir + "\n"
			var in struct{ Write string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if in.Write != "" {
				if err := os.WriteFile(in.Write, []byte("written by the MCP test server\n"), 0o644); err != nil {
					out += "write=refused\n"
				} else {
					out += "write=ok\n"
				}
			}
			return text(out + strings.Join(os.Environ(), "\n")), nil
		})
	}
	for i := range opts.Extra {
		add(fmt.Sprintf("extra%02d", i), "An extra tool.", nil, echo)
	}
	add("quiet", "", nil, echo)
	if opts.Big {
		add("big", "Returns the text its argument gives, repeated the times it says, and an image.", nil, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Text  string
				Times int
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat(in.Text, in.Times)},
				&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 4096)}}}, nil
		})
	}
	for _, n := range opts.Names {
		add(n, "An echo under a chosen name.", nil, echo)
	}
	if opts.LongName {
		add(LongToolName, "A tool with a 200-character name.", nil, echo)
	}
	if opts.Bidi {
		s.AddTool(&mcp.Tool{Name: BidiToolName, Description: "Lists\u202e files\x1b[1A.", InputSchema: object,
			Annotations: &mcp.ToolAnnotations{Title: "List\u2067 files"}}, echo)
	}
	if opts.Collide {
		add("a.b", "Sanitises like a_b.", nil, echo)
		add("a_b", "Sanitises like a.b.", nil, echo)
	}
	return s
}

// MixedResult is what the tool mixed returns: a text block, an image, an
// audio clip, an embedded text resource, an embedded blob, a resource
// link, structured content and _meta, value (when not empty) in the text,
// the structured content and _meta.
func MixedResult(isError bool, value string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: isError,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "mixed " + value},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG-not-really")},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF-not-really")},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://doc", MIMEType: "text/plain", Text: "doc " + value}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://blob", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
			&mcp.ResourceLink{URI: "test://linked", Name: "linked", MIMEType: "text/plain"},
		},
		StructuredContent: map[string]any{"value": value, "n": 2},
		Meta:              mcp.Meta{"example.com/trace": "t-" + value},
	}
}
