//go:build unix

package runtime

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/basis-go/basis/contract"
	"github.com/google/go-cmp/cmp"
)

// awkward are strings that test every escaping rule: quotes, backslashes,
// control characters, HTML characters (kept as they are), invalid UTF-8,
// U+2028/U+2029, and text beyond ASCII.
var awkward = []string{
	"", "plain", `say "hi"`, `back\slash`, "tab\tnew\nline\rcr", "\b\f\x00\x01\x1f\x7f",
	"<a href='x'>&&</a>", "bad\xffutf8\xc3", "line\u2028sep\u2029para", "naïve ☃ 𝄞", "\u00e9\xe2\x80",
}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return awkward[r.IntN(len(awkward))]
	}
	var sb strings.Builder
	for range r.IntN(12) {
		switch r.IntN(4) {
		case 0:
			sb.WriteByte(byte(r.IntN(256)))
		case 1:
			sb.WriteRune(rune(r.IntN(0x3000)))
		default:
			sb.WriteByte(byte(0x20 + r.IntN(0x5f)))
		}
	}
	return sb.String()
}

// TestAppendRecordMatchesEncodingJSON holds the reflection-free encoder to
// the bytes encoding/json writes for the same record, so the audit log's
// lines are what they were: every field set and unset, every escaping
// rule, records that only encoding/json may word (refused or encoded by
// it), and a random sample.
func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	se := contract.SideEffectProcess
	badEffect := contract.SideEffect(99)
	when := time.Date(2026, 12, 1, 20, 30, 0, 123456789, time.UTC)
	full := AuditRecord{Time: when, Event: AuditEnd, CallID: "c1", Tool: "deploy", Binding: "declared", Source: "/w/.basis/tools.json",
		SideEffect: &se, Subject: json.RawMessage(`{"command":["make","x && y"],"tool":"deploy"}`),
		Verdict: &AuditVerdict{Allow: true, Source: "rule", Reason: "allowed <by> rule", Rule: `deploy "*"`},
		Outcome: StatusToolError, Stage: StageNone, Refusal: "", DurationMS: 1.234, Exit: &AuditExit{Kind: "exited", Code: 2, Signal: "SIGKILL"}}
	tests := []struct {
		name string
		rec  AuditRecord
	}{
		{"zero end", AuditRecord{Event: AuditEnd, Time: time.Time{}.UTC()}},
		{"start", AuditRecord{Time: when, Event: AuditStart, CallID: "c1", Tool: "t", SideEffect: &se, Subject: json.RawMessage(`{"a":1}`), Verdict: &AuditVerdict{Source: "approver"}}},
		{"start with a duration", AuditRecord{Time: when, Event: AuditStart, Tool: "t", DurationMS: 5}},
		{"full end", full},
		{"refused", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", Outcome: StatusRefused, Stage: StageDenied, Refusal: "no\n\"way\"", DurationMS: 0.001}},
		{"subject with spaces", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", Subject: json.RawMessage(" { \"a\" : [ 1 , \"<&>\" ] } ")}},
		{"subject not JSON", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", Subject: json.RawMessage("not json \u2028 <&>")}},
		{"tiny duration", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", DurationMS: 1e-7}},
		{"huge duration", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", DurationMS: 3e21}},
		{"negative duration", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", DurationMS: -12.5}},
		{"not UTC", AuditRecord{Time: when.In(time.FixedZone("X", 3600)), Event: AuditEnd, Tool: "x"}},
		{"year 10000", AuditRecord{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Event: AuditEnd, Tool: "x"}},
		{"bad side effect", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", SideEffect: &badEffect}},
		{"bad status", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", Outcome: "maybe"}},
		{"bad stage", AuditRecord{Time: when, Event: AuditEnd, Tool: "x", Stage: "later"}},
		{"input round", AuditRecord{Time: when, Event: AuditInput, CallID: "c1", Tool: "x", Input: &AuditInputRound{Asker: "s", Keys: []string{"step1", "<a\u2028>"}}}},
		{"input round without keys", AuditRecord{Time: when, Event: AuditInput, Tool: "x", Input: &AuditInputRound{Asker: "s"}}},
	}
	for _, s := range awkward {
		rec := full
		rec.CallID, rec.Tool, rec.Binding, rec.Source, rec.Refusal = s, s, s, s, s
		rec.Verdict = &AuditVerdict{Source: s, Reason: s, Rule: s}
		rec.Exit = &AuditExit{Kind: s, Signal: s}
		rec.Input = &AuditInputRound{Asker: s, Keys: []string{s, s}}
		tests = append(tests, struct {
			name string
			rec  AuditRecord
		}{"awkward " + strconvQuote(s), rec})
	}
	r := rand.New(rand.NewPCG(25, 2026))
	for i := range 500 {
		rec := AuditRecord{Time: when.Add(time.Duration(r.Int64N(1e15))), Event: []AuditEvent{AuditStart, AuditEnd}[r.IntN(2)],
			CallID: randomString(r), Tool: randomString(r), Binding: randomString(r), Source: randomString(r), Refusal: randomString(r),
			DurationMS: float64(r.Int64N(1e9)) / 1000}
		if r.IntN(2) == 0 {
			rec.Verdict = &AuditVerdict{Allow: r.IntN(2) == 0, Source: randomString(r), Reason: randomString(r), Rule: randomString(r)}
		}
		if r.IntN(2) == 0 {
			subject, _ := json.Marshal(map[string]string{randomString(r): randomString(r)})
			rec.Subject = subject
		}
		if r.IntN(2) == 0 {
			rec.Exit = &AuditExit{Kind: randomString(r), Code: r.IntN(300) - 10, Signal: randomString(r)}
		}
		tests = append(tests, struct {
			name string
			rec  AuditRecord
		}{"random " + strconvQuote(string(rune('a'+i%26))), rec})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.rec, tt.rec
			got, gotErr := encodeRecord(&a)
			wantErr := quoteInvalidSubject(&b)
			var want []byte
			if wantErr == nil {
				want, wantErr = encodeReflect(&b)
			}
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("encodeRecord error %v, encoding/json's %v", gotErr, wantErr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("encodeRecord differs from encoding/json (-json +ours):\n%s", diff)
			}
		})
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
