"""The one home for Go-compatible text, one module per topic:

    quoting     Go's `%q` (strconv.Quote and Unquote) and the display escaping every shown string
                goes through
    durations   time.Duration: units, String, ParseDuration, Round, Truncate, int64 arithmetic,
                oc's shortDuration
    times       instants: RFC 3339 as Go's time.Parse reads it and Format writes it, on integer
                nanoseconds; the API's timestamps (metav1.Time, MicroTime)
    messages    bounded one-line messages, network errors as their phrase
    jsoncodec   JSON as Go's encoding/json decodes and encodes it, its errors in Go's words
    numbers     strconv's number formatting and parsing (FormatFloat, ParseInt, ParseFloat)
    base64std   base64.StdEncoding's decoding, with Go's error offsets

Importers name the module they use (`from cvo_py.runtime.gotext.times import parse_time`): this
package re-exports nothing, so a short-lived command loads only the topics it needs.
"""
