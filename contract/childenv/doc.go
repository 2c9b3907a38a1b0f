// Package childenv decides what a program basis starts inherits from the
// environment basis runs in. It is the one rule every binding applies —
// declared tools, MCP stdio servers, hook approvers, the delegate — so
// that none of them can disagree with another about which variable is a
// secret.
//
// The ordinary environment passes: PATH, HOME, LANG and the rest are how
// programs are found and how most of them work at all. Two kinds of
// variable do not:
//
//   - basis's own, every name starting with BASIS_ (in any case): they
//     configure basis, and one of them, BASIS_SERVE_TOKEN, lets whoever
//     holds it answer basis's own approval questions. No setting passes
//     them.
//   - names that look like credentials ([Withheld]): containing TOKEN,
//     SECRET, PASSWORD, PASSWD, CREDENTIAL or KEY in any case, and
//     SSH_AUTH_SOCK and OTEL_EXPORTER_OTLP_HEADERS (and its per-signal
//     forms, which hold the telemetry backend's key). They pass only
//     when the caller names them in its pass list: the operator's
//     setting, or a program's own
//     configuration setting the variable explicitly (which is a layer
//     over the inherited one, not a part of it).
//
// A name can be withheld that holds nothing secret (MONKEY_ID,
// KEYTIMEOUT): a program that needs one gets it by name.
package childenv
