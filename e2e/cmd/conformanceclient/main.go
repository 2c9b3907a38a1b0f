// Command conformanceclient is the client command the MCP conformance
// suite runs to test basis as an MCP client: for each scenario the suite
// runs
//
//	conformanceclient SERVER-URL
//
// with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT) set, and this
// program does the scenario's work — what go-sdk's everything-client does
// for it — only by running the built basis binary: it writes an operator
// configuration directory whose mcp.json names SERVER-URL as the
// streamable-HTTP server "test", then runs `basis tools --json` and
// `basis call mcp__test__TOOL JSON`. Every MCP message the suite sees
// comes from basis's own client.
//
// BASIS_CONFORMANCE_BASIS names the basis binary (default: basis on
// PATH). Authorization redirects are followed by the program in BROWSER,
// which basis runs; this program passes the variable on untouched.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// server is the name the scenario's server has in mcp.json, so its tools
// are mcp__test__<tool>.
const server = "test"

// scenarioBound bounds one scenario's work; the suite's own timeout is
// 30 s.
const scenarioBound = 25 * time.Second

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformanceclient: ")
	if len(os.Args) != 2 {
		log.Fatal("usage: conformanceclient SERVER-URL (with MCP_CONFORMANCE_SCENARIO set)")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if scenario == "" {
		log.Fatal("MCP_CONFORMANCE_SCENARIO is not set; the conformance suite sets it")
	}
	var confCtx map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &confCtx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioBound)
	defer cancel()
	b, err := newBasis(os.Args[1], confCtx)
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(b.dir)
	if err := runScenario(ctx, b, scenario, confCtx); err != nil {
		log.Fatalf("scenario %s: %v", scenario, err)
	}
}

// runScenario does scenario's work through b.
func runScenario(ctx context.Context, b *basis, scenario string, confCtx map[string]any) error {
	switch {
	case scenario == "initialize", scenario == "request-metadata", scenario == "json-schema-ref-no-deref":
		// Connecting and listing the tools is the whole scenario.
		_, err := b.tools(ctx)
		return err
	case scenario == "tools_call":
		return b.callListed(ctx, "add_numbers", `{"a":5,"b":3}`)
	case scenario == "elicitation-sep1034-client-defaults":
		return b.callListed(ctx, "test_client_elicitation_defaults", `{}`, "--elicit", "defaults")
	case scenario == "sse-retry":
		return b.callListed(ctx, "test_reconnection", `{}`)
	case scenario == "sep-2322-client-request-state":
		// Some of these are meant to be refused; the suite judges.
		for _, t := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if err := b.call(ctx, t, `{}`, "--elicit", "defaults"); err != nil {
				log.Print(err)
			}
		}
		return nil
	case scenario == "http-standard-headers":
		// basis calls tools only (it reads no resources or prompts).
		tools, err := b.tools(ctx)
		if err != nil || len(tools) == 0 {
			return err
		}
		if err := b.call(ctx, tools[0].tool, `{}`); err != nil {
			log.Print(err)
		}
		return nil
	case scenario == "http-custom-headers":
		if _, err := b.tools(ctx); err != nil {
			return err
		}
		calls, _ := confCtx["toolCalls"].([]any)
		for _, c := range calls {
			obj, _ := c.(map[string]any)
			name, _ := obj["name"].(string)
			args, _ := obj["arguments"].(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			in, _ := json.Marshal(args)
			if err := b.call(ctx, name, string(in)); err != nil {
				log.Print(err)
			}
		}
		return nil
	case scenario == "http-invalid-tool-headers":
		tools, err := b.tools(ctx)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if err := b.call(ctx, t.tool, `{"region":"us-west1"}`); err != nil {
				log.Print(err)
			}
		}
		return nil
	case scenario == "json-schema-2020-12-preservation":
		tools, err := b.tools(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(tools, func(t listed) bool { return t.tool == "json_schema_2020_12_tool" })
		if i < 0 {
			return errors.New("basis tools does not list json_schema_2020_12_tool")
		}
		in, err := json.Marshal(map[string]json.RawMessage{"schema": tools[i].InputSchema})
		if err != nil {
			return err
		}
		return b.call(ctx, "json_schema_echo", string(in))
	case strings.HasPrefix(scenario, "auth/"):
		if _, err := b.tools(ctx); err != nil {
			return err
		}
		return b.call(ctx, "test-tool", `{}`)
	}
	return fmt.Errorf("unknown scenario (this client knows those of go-sdk v1.8.0's everything-client)")
}

// basis runs the basis binary on a configuration directory of its own.
type basis struct {
	bin string
	// dir holds config/ (BASIS_CONFIG_DIR) and ws/ (the workspace, -C).
	dir string
}

// newBasis writes the configuration: mcp.json naming url as the http
// server "test", with the pre-registered OAuth client the scenario's
// context gives, if any.
func newBasis(url string, confCtx map[string]any) (*basis, error) {
	bin := os.Getenv("BASIS_CONFORMANCE_BASIS")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("basis"); err != nil {
			return nil, errors.New("no basis binary: set BASIS_CONFORMANCE_BASIS or put basis on PATH")
		}
	}
	dir, err := os.MkdirTemp("", "basis-conformanceclient-")
	if err != nil {
		return nil, err
	}
	b := &basis{bin: bin, dir: dir}
	// The Client ID Metadata Document everything-client offers; a server
	// that does not accept one gets dynamic registration.
	oauth := map[string]any{"client_metadata_url": "https://conformance-test.local/client-metadata.json"}
	entry := map[string]any{"type": "http", "url": url, "oauth": oauth}
	if id, ok := confCtx["client_id"].(string); ok {
		oauth["client_id"] = id
		if secret, ok := confCtx["client_secret"].(string); ok {
			// Through a variable, as an operator would keep it.
			oauth["client_secret"] = "${CONFORMANCE_CLIENT_SECRET}"
			os.Setenv("CONFORMANCE_CLIENT_SECRET", secret)
		}
	}
	cfg, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{server: entry}}, "", "  ")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"config", "ws"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "mcp.json"), cfg, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}

// run runs basis with args and returns its stdout; a non-zero exit is an
// error holding its stderr.
func (b *basis) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.bin, append([]string{"-C", filepath.Join(b.dir, "ws")}, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BASIS_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "BASIS_CONFIG_DIR="+filepath.Join(b.dir, "config"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	os.Stderr.Write(stderr.Bytes())
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("basis %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// listed is one of the server's tools as basis tools --json lists it.
type listed struct {
	Name        string          `json:"name"`
	Binding     string          `json:"binding"`
	InputSchema json.RawMessage `json:"input_schema"`
	// tool is the server's own name of it.
	tool string
}

// tools lists the server's tools through basis tools --json; the server
// not connected is an error.
func (b *basis) tools(ctx context.Context) ([]listed, error) {
	out, err := b.run(ctx, "tools", "--json")
	if err != nil {
		return nil, err
	}
	var all []listed
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("basis tools --json: %v", err)
	}
	var mine []listed
	for _, t := range all {
		if name, ok := strings.CutPrefix(t.Name, "mcp__"+server+"__"); ok && t.Binding == "mcp" {
			t.tool = name
			mine = append(mine, t)
		}
	}
	if len(mine) == 0 {
		// basis tools says on stderr why the server gave none.
		return nil, errors.New("basis tools --json lists no tool of the server")
	}
	return mine, nil
}

// call calls the server's tool through basis call, allowing it.
func (b *basis) call(ctx context.Context, tool, input string, flags ...string) error {
	args := append([]string{"call", "--approve", "allow"}, flags...)
	_, err := b.run(ctx, append(args, "mcp__"+server+"__"+tool, input)...)
	return err
}

// callListed lists the tools, as a model's host would before calling,
// then calls tool.
func (b *basis) callListed(ctx context.Context, tool, input string, flags ...string) error {
	if _, err := b.tools(ctx); err != nil {
		return err
	}
	return b.call(ctx, tool, input, flags...)
}
