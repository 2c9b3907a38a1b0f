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
// used is an error, never a shorter list.
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
// manifest is reported, each as an [*Error] naming the file, line and
// column, tool, field and variable — never a value read from the file,
// since values may be credentials.
//
// # Placeholders and the environment
//
// ${VAR} and ${VAR:-default} expand in command, cwd and env when the
// manifest is loaded, from the inherited environment and the runtime's
// command environment ([Config]). The program's environment is, outermost
// first: the inherited environment, the runtime's command environment, the
// manifest's env; later wins. No value of it is ever printed: [Spec] and
// [Tool] redact env values in every fmt verb, in slog and in JSON.
//
// # Previews
//
// A tool's [Tool.AuthorizationPreview] shows the command and cwd as
// written in the manifest, placeholders unexpanded, with the input: an
// argument carrying ${TOKEN} reaches the program but never an approver, a
// rule, an audit record or an error. Every declared tool is consequential:
// side_effect is process or external, and no tool can declare itself
// read-only.
package declared
