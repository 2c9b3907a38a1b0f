//go:build unix

package runtime

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends rec as encoding/json (without HTML escaping)
// writes it, newline included, without reflection: a call writes two
// records, and encoding them by reflection was a measurable share of the
// pipeline (issue 25). ok is false for what only encoding/json words
// right — a time outside years 0-9999 or not in UTC, a side effect,
// status or stage that is none of the constants — and the caller then
// uses encodeReflect. ok is false for a subject that is not JSON too
// (encodeRecord then quotes it and tries again).
func appendRecord(b []byte, rec *AuditRecord) (_ []byte, ok bool) {
	if rec.Time.Location() != time.UTC || rec.Time.Year() < 0 || rec.Time.Year() > 9999 {
		return nil, false
	}
	b = append(b, `{"time":"`...)
	b = rec.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","event":`...)
	b = appendString(b, string(rec.Event))
	if rec.CallID != "" {
		b = append(b, `,"call_id":`...)
		b = appendString(b, rec.CallID)
	}
	b = append(b, `,"tool":`...)
	b = appendString(b, rec.Tool)
	if rec.Binding != "" {
		b = append(b, `,"binding":`...)
		b = appendString(b, rec.Binding)
	}
	if rec.Source != "" {
		b = append(b, `,"source":`...)
		b = appendString(b, rec.Source)
	}
	if rec.SideEffect != nil {
		text, err := rec.SideEffect.MarshalText()
		if err != nil {
			return nil, false
		}
		b = append(b, `,"side_effect":`...)
		b = appendString(b, string(text))
	}
	if len(rec.Subject) > 0 {
		b = append(b, `,"subject":`...)
		buf := bytes.NewBuffer(b)
		if json.Compact(buf, rec.Subject) != nil {
			return nil, false
		}
		b = buf.Bytes()
	}
	if v := rec.Verdict; v != nil {
		b = append(b, `,"verdict":{"allow":`...)
		b = strconv.AppendBool(b, v.Allow)
		b = append(b, `,"source":`...)
		b = appendString(b, v.Source)
		if v.Reason != "" {
			b = append(b, `,"reason":`...)
			b = appendString(b, v.Reason)
		}
		if v.Rule != "" {
			b = append(b, `,"rule":`...)
			b = appendString(b, v.Rule)
		}
		b = append(b, '}')
	}
	if rec.Outcome != "" {
		text, err := rec.Outcome.MarshalText()
		if err != nil {
			return nil, false
		}
		b = append(b, `,"outcome":`...)
		b = appendString(b, string(text))
	}
	if rec.Stage != "" {
		text, err := rec.Stage.MarshalText()
		if err != nil {
			return nil, false
		}
		b = append(b, `,"stage":`...)
		b = appendString(b, string(text))
	}
	if rec.Refusal != "" {
		b = append(b, `,"refusal":`...)
		b = appendString(b, rec.Refusal)
	}
	// A start has no duration (encodeReflect hides the field).
	if rec.Event != AuditStart {
		if math.IsNaN(rec.DurationMS) || math.IsInf(rec.DurationMS, 0) {
			return nil, false
		}
		b = append(b, `,"duration_ms":`...)
		b = appendFloat(b, rec.DurationMS)
	}
	if e := rec.Exit; e != nil {
		b = append(b, `,"exit":{"kind":`...)
		b = appendString(b, e.Kind)
		if e.Code != 0 {
			b = append(b, `,"code":`...)
			b = strconv.AppendInt(b, int64(e.Code), 10)
		}
		if e.Signal != "" {
			b = append(b, `,"signal":`...)
			b = appendString(b, e.Signal)
		}
		b = append(b, '}')
	}
	if in := rec.Input; in != nil {
		b = append(b, `,"input":{"asker":`...)
		b = appendString(b, in.Asker)
		b = append(b, `,"keys":`...)
		if in.Keys == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, k := range in.Keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}', '\n'), true
}

// appendFloat formats f as encoding/json does a float64.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does without HTML escaping:
// control characters escaped, invalid UTF-8 as U+FFFD, and U+2028 and
// U+2029 escaped (JavaScript reads them as line ends).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
