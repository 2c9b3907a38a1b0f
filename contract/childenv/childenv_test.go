package childenv_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/basis-go/basis/contract/childenv"
)

func TestPasses(t *testing.T) {
	tests := []struct {
		name string
		pass []string
		want bool
	}{
		// The ordinary environment passes.
		{"PATH", nil, true},
		{"HOME", nil, true},
		{"LANG", nil, true},
		{"FOO", nil, true},
		{"SSH_AGENT_PID", nil, true},
		// basis's own never do, whatever the pass list says.
		{"BASIS_SERVE_TOKEN", nil, false},
		{"BASIS_CONFIG_DIR", nil, false},
		{"basis_serve_token", nil, false},
		{"Basis_Delegate", nil, false},
		{"BASIS_SERVE_TOKEN", []string{"*"}, false},
		{"BASIS_SERVE_TOKEN", []string{"BASIS_SERVE_TOKEN"}, false},
		{"BASIS", nil, true}, // no prefix: not one of basis's
		// Credential-looking names need the pass list.
		{"GITHUB_TOKEN", nil, false},
		{"AWS_SECRET_ACCESS_KEY", nil, false},
		{"DB_PASSWORD", nil, false},
		{"MYSQL_PASSWD", nil, false},
		{"GOOGLE_APPLICATION_CREDENTIALS", nil, false},
		{"OPENAI_API_KEY", nil, false},
		{"github_token", nil, false},
		{"SSH_AUTH_SOCK", nil, false},
		{"ssh_auth_sock", nil, false},
		{"MONKEY_ID", nil, false}, // a false alarm, passed by name
		// The OTLP exporter's headers carry the backend's API key.
		{"OTEL_EXPORTER_OTLP_HEADERS", nil, false},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", nil, false},
		{"OTEL_EXPORTER_OTLP_METRICS_HEADERS", nil, false},
		{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", nil, false},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", nil, true},
		{"OTEL_EXPORTER_OTLP_HEADERS", []string{"OTEL_*"}, true},
		{"GITHUB_TOKEN", []string{"GITHUB_TOKEN"}, true},
		{"GITHUB_TOKEN", []string{"GITHUB_*"}, true},
		{"GITHUB_TOKEN", []string{"*_TOKEN"}, true},
		{"GITHUB_TOKEN", []string{"*"}, true},
		{"GITHUB_TOKEN", []string{"github_token"}, false}, // names are case-sensitive
		{"GITHUB_TOKEN", []string{"GITLAB_*", "AWS_*"}, false},
		{"SSH_AUTH_SOCK", []string{"SSH_AUTH_SOCK"}, true},
		{"MONKEY_ID", []string{"MONKEY_ID"}, true},
	}
	for _, tt := range tests {
		if got := childenv.Passes(tt.name, tt.pass); got != tt.want {
			t.Errorf("Passes(%q, %q) = %t, want %t", tt.name, tt.pass, got, tt.want)
		}
	}
}

func TestInherited(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "FOO=bar",
		"BASIS_SERVE_TOKEN=canary-serve", "BASIS_CONFIG_DIR=/home/u/.config/basis",
		"AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-gh", "DB_PASSWORD=canary-db",
		"SSH_AUTH_SOCK=/tmp/agent.sock", "AWS_PROFILE=dev", "EMPTY=",
	}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"nothing passed", nil, []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "FOO=bar", "AWS_PROFILE=dev", "EMPTY="}},
		{"one name", []string{"GITHUB_TOKEN"}, []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "FOO=bar", "GITHUB_TOKEN=canary-gh", "AWS_PROFILE=dev", "EMPTY="}},
		{"everything", []string{"*"}, []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "FOO=bar",
			"AWS_SECRET_ACCESS_KEY=canary-aws", "GITHUB_TOKEN=canary-gh", "DB_PASSWORD=canary-db",
			"SSH_AUTH_SOCK=/tmp/agent.sock", "AWS_PROFILE=dev", "EMPTY="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]string(nil), environ...)
			got := childenv.Inherited(environ, tt.pass)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Inherited:\n got %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(environ, before) {
				t.Error("Inherited changed its argument")
			}
		})
	}
	if got := childenv.Inherited(nil, nil); got == nil || len(got) != 0 {
		t.Errorf("Inherited(nil) = %#v, want an empty, non-nil list (nil means os.Environ() to exec)", got)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"A", "A", true},
		{"A", "AB", false},
		{"A*", "A", true},
		{"A*", "AB", true},
		{"*B", "AB", true},
		{"*B", "BA", false},
		{"A*B", "AB", true},
		{"A*B", "AXYB", true},
		{"A*A", "A", false},
		{"A*B*C", "AXBYC", true},
		{"A*B*C", "ACB", false},
		{"*", "", true},
		{"**", "X", true},
		{"a*", "A", false},
	}
	for _, tt := range tests {
		if got := childenv.Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %t, want %t", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	tests := []struct {
		pattern string
		ok      bool
	}{
		{"GITHUB_TOKEN", true},
		{"AWS_*", true},
		{"*", true},
		{"*_KEY", true},
		{"", false},
		{"BASIS_SERVE_TOKEN", false},
		{"basis_*", false},
		{"1PASSWORD", false},
		{"A-B", false},
		{"A=B", false},
		{"A B", false},
	}
	for _, tt := range tests {
		err := childenv.CheckPattern(tt.pattern)
		if (err == nil) != tt.ok {
			t.Errorf("CheckPattern(%q) = %v, want ok %t", tt.pattern, err, tt.ok)
		}
		if err != nil && !errors.Is(err, childenv.ErrInvalidPattern) {
			t.Errorf("CheckPattern(%q) = %v, which does not wrap ErrInvalidPattern", tt.pattern, err)
		}
	}
}
