//go:build unix

// Package declared turns the tools a workspace declares in
// .basis/tools.json into tools the runtime can run: a name, a description,
// a JSON schema and an argv command. The model fills in the schema; the
// object is written to the program's stdin; what the program prints is the
// result. There is no shell anywhere on the path, so nothing in a tool's
// input can be reinterpreted as shell syntax and there is nothing to quote.
//
// # Manifests
//
// Tools are declared in <root>/.basis/tools.json and in tools.json inside
// the global configuration directory, most specific first ([Discover],
// [Load]). A workspace tool shadows a global one of the same name. A
// missing manifest means no tools; a manifest that exists and cannot be
// used is an error, never a shorter list. Manifests are read the way
// every basis config file is (module configfile): a named pipe, a link
// to a device or a file over [MaxManifestSize] is refused unread, and a
// load honours its context.
//
//	{
//	  "schema": 1,
//	  "tools": {
//	    "jenkins_job": {
//	      "description": "Trigger a Jenkins job and return its build number.",
//	      "input_schema": {"type": "object", "properties": {"job": {"type": "string"}}, "required": ["job"]},
//	      "command": ["./.basis/tools/jenkins", "trigger"],
//	      "env": {"JENKINS_TOKEN": "${JENKINS_TOKEN}"},
//	      "side_effect": "external",
//	      "timeout_ms": 60000
//	    }
//	  }
//	}
//
// The format is strict: unknown keys are errors at every level, so a
// misspelled timeout_ms cannot silently default. Every problem in every
// manifest is reported, each as a [*configfile.Error] naming the file,
// line and column, the tool (Subject "tool NAME") and the field, and for a
// placeholder the variable (a [*configfile.ExpandError] in its chain) —
// never a value read from the file, since values may be credentials. A manifest's env may not set the
// dynamic loader's variables (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT,
// DYLD_*). "network": true (only with "side_effect": "external") says the
// program may reach the network when it runs sandboxed ([Spec.Network]).
//
// # Placeholders and the environment
//
// ${VAR} and ${VAR:-default} expand in command, cwd and env when the
// manifest is loaded, from the whole environment basis runs in and the
// runtime's command environment ([Options]); a placeholder naming one of
// basis's own BASIS_* variables is a load error. The program's
// environment is, outermost first: what it inherits of basis's
// environment, the runtime's command environment, the manifest's env;
// later wins. It inherits the ordinary environment but not basis's own
// BASIS_* variables, nor names that look like credentials (TOKEN, SECRET,
// PASSWORD, PASSWD, CREDENTIAL, KEY, SSH_AUTH_SOCK) unless the manifest's
// env names them or the operator passes them ([Options.PassEnv],
// contract/childenv): a deliberate departure from the seed's "nothing is
// cleared". No value of it is ever printed: [Spec] and [Tool] redact env
// values in every fmt verb, in slog and in JSON.
//
// A ${VAR} naming an unset variable breaks only its own tool: the tool is
// listed, [Tool.Unavailable] says which variable to set, and its calls
// are refused with an [*UnavailableError] (wrapping
// [contract.ErrRefused]); every other tool works. So does a workspace
// manifest's cwd that leads outside the workspace, links followed
// ([ErrOutsideWorkspace]): checked at load, and again at every preview and
// Execute, where the program starts in the real path found. Credentials
// belong in env, not in command arguments, which every local user can
// read in /proc/<pid>/cmdline while the program runs: [Tool.Warnings]
// flags an argument holding a ${VAR} whose name looks like a credential.
// [Tool.CheckStart] reports a program that could not start (missing, not
// executable, a directory, a missing #! interpreter, a working directory
// that cannot be entered) without running it.
//
// # Previews: the subject is what runs
//
// A tool's [Tool.AuthorizationPreview] Subject is
//
//	{"command": [...], "cwd": "...", "env": [NAMES], "input": {...}, "program": "/abs/path", "tool": NAME}
//
// command and cwd are as written in the manifest, placeholders
// unexpanded: an argument carrying ${TOKEN} reaches the program but never
// an approver, a rule, an audit record or an error. env lists the names
// the manifest sets, never values. input is the call's input in canonical
// form (contract.CanonicalInput): input with a duplicate key, keys equal
// under case folding or nesting too deep is refused as invalid, and the
// program's stdin receives exactly the bytes the subject shows. program
// is the absolute path command[0] resolves to in the program's own
// environment — the manifest's PATH included — and is the path Execute
// runs. Every declared tool is consequential: side_effect is process or
// external, and no tool can declare itself read-only.
//
// # Sandbox
//
// A host confines the programs through [Options.Sandbox], a hook returning
// a [subprocess.Confinement] (this package does not import the sandbox):
// the subject then gains "sandbox", the confinement's description, and
// Execute runs the program through its Confine hook — still the path the
// subject's "program" names. A hook that cannot confine the program
// refuses the call ([contract.ErrRefused], and the hook's own error);
// nothing runs unconfined in its place.
package declared
