//go:build unix

package declared_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/basis-go/basis/configfile"
	"github.com/basis-go/basis/contract"
	"github.com/basis-go/basis/declared"
	"github.com/basis-go/basis/subprocess"
)

func Example() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
	  "schema": 1,
	  "tools": {
	    "shout": {
	      "description": "Upper-case the text.",
	      "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	      "command": ["tr", "a-z", "A-Z"],
	      "env": {"SHOUT_TOKEN": "${SHOUT_TOKEN}"}
	    }
	  }
	}`), 0o644)

	tools, err := declared.Load(context.Background(), root, &declared.Options{
		Environ: []string{"PATH=/usr/bin:/bin", "SHOUT_TOKEN=s3cret"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := tools[0]
	d := tool.Descriptor()
	fmt.Println(d.Name, d.Binding, d.SideEffect, d.Timeout)

	ctx := context.Background()
	call := contract.Call{ID: "call_1", Input: json.RawMessage(`{"text": "hello"}`)}
	preview, _ := tool.AuthorizationPreview(ctx, call)
	fmt.Printf("%s\n", preview.Subject)

	res, err := tool.Execute(ctx, call)
	fmt.Println(res.Text, err)

	_, err = tool.Execute(ctx, contract.Call{ID: "call_2", Input: json.RawMessage(`{"text": 5}`)})
	fmt.Println(err)

	fmt.Println(strings.ReplaceAll(fmt.Sprint(tool), root, "$ROOT"))
	// Output:
	// shout declared process 2m0s
	// {"command":["tr","a-z","A-Z"],"cwd":".","env":["SHOUT_TOKEN"],"input":{"text":"hello"},"program":"/usr/bin/tr","tool":"shout"}
	// {"TEXT":"HELLO"} <nil>
	// the input for shout does not match its schema: /text: expected string, but got number
	// declared tool shout: tr a-z A-Z (process, timeout 2m0s, env SHOUT_TOKEN=[redacted]) from $ROOT/.basis/tools.json
}

// Every problem in every manifest is reported, each an *Error of its own.
func ExampleLoad_problems() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
  "schema": 1,
  "tools": {
    "deploy": {
      "description": "Deploy a service.",
      "input_schema": {"type": "object"},
      "command": ["./deploy"],
      "env": {"LD_PRELOAD": "/tmp/hook.so"},
      "timout_ms": 60000
    }
  }
}`), 0o644)

	_, err := declared.Load(context.Background(), root, &declared.Options{Environ: []string{}})
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var p *configfile.Error
		if errors.As(e, &p) {
			fmt.Printf("line %d, %s, field %s: %v\n", p.Line, p.Subject, p.Field, p.Err)
		}
	}
	// Output:
	// line 8, tool deploy, field env.LD_PRELOAD: sets a variable that makes the dynamic loader run other code inside the program, unseen by any preview; a manifest may not set LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT or DYLD_*
	// line 9, tool deploy, field timout_ms: unknown key; did you mean timeout_ms? (a tool may have description, input_schema, command, cwd, env, side_effect, timeout_ms, network, sandbox)
}

// A tool whose ${VAR} names an unset variable is listed but unavailable:
// its calls are refused, saying which variable to set, and every other
// tool works. Warnings point at credentials passed in arguments.
func ExampleTool_Unavailable() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
  "schema": 1,
  "tools": {
    "issues": {
      "description": "List open issues.",
      "input_schema": {"type": "object"},
      "command": ["curl", "-H", "Authorization: Bearer ${GITHUB_TOKEN}", "https://api.github.com/issues"],
      "side_effect": "external"
    },
    "word_count": {
      "description": "Count words on stdin.",
      "input_schema": {"type": "object"},
      "command": ["wc", "-w"]
    }
  }
}`), 0o644)

	tools, err := declared.Load(context.Background(), root, &declared.Options{Environ: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tool := range tools {
		fmt.Println(tool.Descriptor().Name, "unavailable:", tool.Unavailable() != nil)
		for _, w := range tool.Warnings() {
			fmt.Println("warning:", w.Field, w.Variable)
		}
	}
	_, err = tools[0].AuthorizationPreview(context.Background(), contract.Call{Input: json.RawMessage(`{}`)})
	fmt.Println(strings.ReplaceAll(err.Error(), root, "$ROOT"))
	fmt.Println(errors.Is(err, contract.ErrRefused), errors.Is(err, configfile.ErrUnsetVariable))
	// Output:
	// issues unavailable: true
	// warning: command[2] GITHUB_TOKEN
	// word_count unavailable: false
	// issues is unavailable: variable GITHUB_TOKEN (command[2], $ROOT/.basis/tools.json:7:33) is not set; set it in the environment basis runs in, or give a default in the manifest: ${GITHUB_TOKEN:-default}
	// true true
}

// A host confines the programs through Options.Sandbox: here a stand-in
// that refuses, as a host's sandbox does on a machine that cannot
// enforce it. The preview refuses and the program never runs.
func ExampleOptions_sandbox() {
	root, _ := os.MkdirTemp("", "declared-example")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{"schema": 1, "tools": {"fetch": {
	  "description": "Fetch the feed.", "input_schema": {"type": "object"},
	  "command": ["/bin/true"], "network": true, "side_effect": "external"}}}`), 0o644)

	unavailable := errors.New(`sandbox unavailable: this kernel has no Landlock; to run programs without a sandbox, the operator sets "mode": "off"`)
	tools, err := declared.Load(context.Background(), root, &declared.Options{
		Environ: []string{"PATH=/usr/bin:/bin"},
		Sandbox: func(tool string, network bool, dir string) (*subprocess.Confinement, error) {
			fmt.Println("asked for", tool, "network", network)
			return nil, unavailable
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = tools[0].AuthorizationPreview(context.Background(), contract.Call{ID: "call_1", Input: json.RawMessage(`{}`)})
	fmt.Println(err)
	fmt.Println(errors.Is(err, contract.ErrRefused), errors.Is(err, unavailable))
	// Output:
	// asked for fetch network true
	// fetch cannot run here: sandbox unavailable: this kernel has no Landlock; to run programs without a sandbox, the operator sets "mode": "off"
	// true true
}

// pathsHidden writes to stdout with the example's temporary directories
// replaced by names, so the output does not depend on where they are.
type pathsHidden struct{ old, new []string }

func (w pathsHidden) Write(p []byte) (int, error) {
	s := string(p)
	for i := range w.old {
		s = strings.ReplaceAll(s, w.old[i], w.new[i])
	}
	_, err := os.Stdout.WriteString(s)
	return len(p), err
}

// A host loads the workspace's and the operator's manifests once, at
// startup. A tool whose ${VAR} is unset is still listed, so the model sees
// it and a call says what to set; the others work.
func ExampleLoad() {
	root, _ := os.MkdirTemp("", "declared-example")
	configDir, _ := os.MkdirTemp("", "declared-config")
	defer os.RemoveAll(root)
	defer os.RemoveAll(configDir)
	root, _ = filepath.EvalSymlinks(root) // the paths messages name
	configDir, _ = filepath.EvalSymlinks(configDir)
	_ = os.MkdirAll(filepath.Join(root, ".basis"), 0o755)
	_ = os.WriteFile(filepath.Join(root, declared.WorkspaceFile), []byte(`{
  "schema": 1,
  "tools": {
    "issues": {
      "description": "List open issues.",
      "input_schema": {"type": "object"},
      "command": ["curl", "-H", "Authorization: Bearer ${GITHUB_TOKEN}", "${CI_URL}/issues"],
      "side_effect": "external"
    }
  }
}`), 0o644)
	_ = os.WriteFile(filepath.Join(configDir, "tools.json"), []byte(`{
  "schema": 1,
  "tools": {
    "word_count": {"description": "Count words on stdin.", "input_schema": {"type": "object"}, "command": ["wc", "-w"]}
  }
}`), 0o644)
	log.SetOutput(pathsHidden{old: []string{root, configDir}, new: []string{"$ROOT", "$CONFIG"}})
	log.SetFlags(0)
	defer log.SetOutput(os.Stderr)
	defer log.SetFlags(log.LstdFlags)
	ctx := context.Background()

	tools, err := declared.Load(ctx, root, &declared.Options{ // workspace: <root>/.basis/tools.json
		ConfigDir:  configDir,                      // global: <configDir>/tools.json
		CommandEnv: []string{"CI_URL=https://ci"},  // the runtime's command environment
		Environ:    []string{"PATH=/usr/bin:/bin"}, // basis's environment; nil is os.Environ()
		PassEnv:    []string{"GITHUB_*"},           // credential-looking names programs inherit all the same
		Reserved:   []string{"read_file"},          // names the host has taken ("spawn" always is)
	})
	if err != nil {
		log.Print(err) // every problem in every manifest, one *configfile.Error per line
		return
	}
	var roster []contract.ExecutableTool
	for _, tool := range tools {
		roster = append(roster, tool) // each is a contract.ExecutableTool, unavailable ones too
		if err := tool.Unavailable(); err != nil {
			log.Print(err) // listed, but its calls are refused: a ${VAR} it needs is unset, or its cwd leads out
		}
		for _, w := range tool.Warnings() {
			log.Print(w) // a credential-looking ${VAR} in a command argument
		}
	}

	for _, tool := range roster {
		d := tool.Descriptor()
		fmt.Println(d.Name, d.SideEffect, "from", strings.ReplaceAll(strings.ReplaceAll(d.Source, root, "$ROOT"), configDir, "$CONFIG"))
	}
	// Output:
	// issues is unavailable: variable GITHUB_TOKEN (command[2], $ROOT/.basis/tools.json:7:33) is not set; set it in the environment basis runs in, or give a default in the manifest: ${GITHUB_TOKEN:-default}
	// $ROOT/.basis/tools.json:7:33: tool issues: command[2]: ${GITHUB_TOKEN} looks like a credential in an argument, which every local user can read in /proc/<pid>/cmdline while the tool runs; pass it in "env" and let the program read it from there
	// issues external from $ROOT/.basis/tools.json
	// word_count process from $CONFIG/tools.json
}
