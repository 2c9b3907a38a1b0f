//go:build unix

package workspace

import (
	"testing"

	"github.com/basis-go/basis/approver"
	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

func TestGitTargets(t *testing.T) {
	req := func(subject map[string]any, dir string) approver.Request {
		data, err := contract.CanonicalJSON(subject)
		if err != nil {
			t.Fatal(err)
		}
		return approver.Request{Tool: "spawn", Preview: contract.Preview{Subject: data, Dir: dir}}
	}
	spawnCall := func(body string, commands ...[]string) approver.Request {
		return req(map[string]any{"body": body, "commands": commands, "cwd": "/repo", "mode": "command"}, "/repo")
	}
	tests := []struct {
		name string
		req  approver.Request
		want []gitTarget
	}{
		{"not git", spawnCall("ls", []string{"ls"}), nil},
		{"git", spawnCall("git status", []string{"git", "status"}), []gitTarget{{dir: "/repo"}}},
		{"git by path", spawnCall("/usr/bin/git status", []string{"/usr/bin/git", "status"}), []gitTarget{{dir: "/repo"}}},
		{"cd then git", spawnCall("cd sub && git status", []string{"cd", "sub"}, []string{"git", "status"}),
			[]gitTarget{{dir: "/repo"}, {dir: "/repo/sub"}}},
		{"git -C, twice, and --git-dir", spawnCall("x", []string{"git", "-c", "a=b", "-C", "a", "-C", "../b", "--git-dir=/g", "status", "-C", "no"}),
			[]gitTarget{{dir: "/repo"}, {dir: "/repo/a"}, {dir: "/repo/b"}, {gitDir: "/g"}}},
		{"git under a wrapper", spawnCall("x", []string{"env", "X=1", "git", "-C", "/other", "log"}),
			[]gitTarget{{dir: "/repo"}, {dir: "/other"}}},
		{"git inside sh -c", spawnCall("x", []string{"sh", "-c", "cd x; git status"}), []gitTarget{{dir: "/repo"}}},
		{"an unanalysable line that mentions git", req(map[string]any{"body": "$(echo git) status", "commands": nil, "cwd": "/repo"}, "/repo"), []gitTarget{{dir: "/repo"}}},
		{"a declared tool whose program is git", req(map[string]any{"command": []string{"git", "log"}, "program": "/usr/bin/git", "cwd": "."}, "/ws"), []gitTarget{{dir: "/ws"}}},
		{"a word that is not git", spawnCall("x", []string{"echo", "gitx", "digit"}), nil},
		{"git on another machine", req(map[string]any{"body": "git status", "commands": [][]string{{"git", "status"}}, "cwd": "/repo", "target": "ci"}, "/repo"), nil},
		{"git here", req(map[string]any{"body": "git status", "commands": [][]string{{"git", "status"}}, "cwd": "/repo", "target": "local"}, "/repo"), []gitTarget{{dir: "/repo"}}},
		{"GIT in capitals", spawnCall("x", []string{"/USR/BIN/GIT", "status"}), []gitTarget{{dir: "/repo"}}},
		// What JSON escapes spell is what the Subject says: a program
		// that hides the word behind them is still found.
		{"git spelt with escapes", approver.Request{Tool: "spawn", Preview: contract.Preview{Dir: "/repo",
			Subject: []byte(`{"body":"x","commands":[["\u0067\u0069\u0074","status"]],"cwd":"/repo"}`)}}, []gitTarget{{dir: "/repo"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, gitTargets(tt.req, "/root"), cmp.AllowUnexported(gitTarget{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// FuzzGitTargets: the look at a Subject's bytes that spares most calls
// the decode never hides git from the decode: whatever a Subject is, when
// decoding it finds git, the look found it could be there.
func FuzzGitTargets(f *testing.F) {
	for _, seed := range []string{
		`{"body":"git status","commands":[["git","status"]],"cwd":"/repo"}`,
		`{"command":["\u0067it","log"],"program":"/usr/bin/x","cwd":"."}`,
		`{"body":"ls","commands":[["ls"]]}`,
		`{"program":"/usr/bin/GiT"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, subject []byte) {
		req := approver.Request{Tool: "spawn", Preview: contract.Preview{Subject: subject, Dir: "/repo"}}
		if decodedGitTargets(req, "/root") != nil && !mayMentionGit(subject) {
			t.Fatalf("git found in %q, which the look ruled out", subject)
		}
	})
}
