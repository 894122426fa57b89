package httpx

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Redaction marks where a secret or a customer text was removed from a message.
const Redaction = "[REDACTED]"

// QuoteWindow is the shortest run of bytes Redact recognises as a partial quote of a
// secret or text: a vendor message that quotes QuoteWindow or more consecutive bytes of any
// secret (in any of the forms Redact knows) loses every such run. Shorter fragments are
// left alone, so that a short word a customer text happens to share with a vendor message
// does not blank the message.
const QuoteWindow = 12

// maxScrubInput bounds the message Redact works on; the rest is cut before redaction (no
// error message needs more, and it bounds the cost of the partial-quote scan).
const maxScrubInput = 4096

// Redact removes every non-empty secret from s, replacing it with Redaction. A secret is a
// credential or a customer text: anything that must not leave the process in an error, a
// log line or a span. Each secret is removed in every form a vendor might echo it in
// (a form shorter than QuoteWindow only where it stands alone, not inside a longer word, so
// that a one-letter text does not blank every "a" of a message):
//
//   - raw;
//   - JSON-escaped, with and without HTML escaping (`"` as \", & < > as \u0026 \u003c
//     \u003e), the way encoding/json writes it, and with every non-ASCII character as
//     \uXXXX (UTF-16, lower- and upper-case hex), the way Python's json.dumps and PHP's
//     json_encode write it by default;
//   - with every non-ASCII character as an HTML numeric entity, decimal or hex (&#26426;,
//     &#x673a;), as an HTML error page may;
//   - URL query-escaped (url.QueryEscape, "+" for space) and path-escaped, also with
//     lower-case percent escapes;
//   - standard and URL-safe base64, padded and raw;
//
// and then every run of QuoteWindow or more bytes of any of those forms, so that a vendor
// that quotes part of a text (a truncated "text 'Bonjour tout le mo...' is invalid") loses
// the part. s is first cut to 4 KiB.
func Redact(s string, secrets ...string) string {
	if len(s) > maxScrubInput {
		s = s[:maxScrubInput]
	}
	if s == "" {
		return s
	}
	var forms []string
	// The ASCII-only forms of a non-ASCII secret hold \u or &# wherever it is not ASCII: a
	// message without them cannot quote those forms other than where the raw form matches.
	ascii := asciiForms{json: strings.Contains(s, `\u`), entity: strings.Contains(s, "&#")}
	for _, sec := range secrets {
		if sec != "" {
			forms = appendForms(forms, sec, ascii)
		}
	}
	if len(forms) == 0 {
		return s
	}
	// Longest first, so that a form containing another is removed whole.
	sortByLenDesc(forms)
	for _, f := range forms {
		if len(f) >= QuoteWindow {
			s = strings.ReplaceAll(s, f, Redaction)
		} else {
			s = replaceWords(s, f)
		}
	}
	return redactQuotes(s, forms)
}

// replaceWords replaces the occurrences of a short form f that stand alone: not preceded
// or followed by a letter or digit ("a" in "Invalid" stays, "a" in "text 'a'" goes), unless
// f itself begins or ends with a non-alphanumeric byte there.
func replaceWords(s, f string) string {
	var b strings.Builder
	last := 0 // s[:last] is written (or replaced) already
	for from := 0; from <= len(s)-len(f); {
		i := strings.Index(s[from:], f)
		if i < 0 {
			break
		}
		i += from
		j := i + len(f)
		if (i == 0 || !alnum(s[i-1]) || !alnum(f[0])) && (j == len(s) || !alnum(s[j]) || !alnum(f[len(f)-1])) {
			b.WriteString(s[last:i])
			b.WriteString(Redaction)
			last, from = j, j
		} else {
			from = i + 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// asciiForms says which ASCII-only forms of a non-ASCII secret appendForms adds.
type asciiForms struct{ json, entity bool }

// appendForms appends the distinct encodings of sec that Redact removes.
func appendForms(forms []string, sec string, ascii asciiForms) []string {
	add := func(f string) {
		if f == "" {
			return
		}
		for _, g := range forms {
			if g == f {
				return
			}
		}
		forms = append(forms, f)
	}
	add(sec)
	add(jsonEscape(sec, true))
	js := jsonEscape(sec, false)
	add(js)
	if ascii.json && !isASCII(sec) {
		add(escapeNonASCII(js, jsonLower))
		add(escapeNonASCII(js, jsonUpper))
	}
	if ascii.entity && !isASCII(sec) {
		add(escapeNonASCII(sec, entityDec))
		add(escapeNonASCII(sec, entityHex))
	}
	q := url.QueryEscape(sec)
	add(q)
	add(lowerEscapes(q))
	p := url.PathEscape(sec)
	add(p)
	add(lowerEscapes(p))
	add(strings.ReplaceAll(q, "+", "%20"))
	if len(sec) >= 4 { // base64 of a very short string is too likely to be a real word
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(sec)))
		}
	}
	return forms
}

// jsonEscape is sec as encoding/json writes it inside a string, without the quotes.
func jsonEscape(sec string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(sec) != nil {
		return ""
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// nonASCII is a way of writing a non-ASCII character in ASCII.
type nonASCII uint8

const (
	jsonLower nonASCII = iota // \u673a, UTF-16 units
	jsonUpper                 // \u673A
	entityDec                 // &#26426;
	entityHex                 // &#x673a;
)

// escapeNonASCII writes every non-ASCII character of s the way form does: as UTF-16 code
// units (a surrogate pair above U+FFFF) for the JSON forms, else as its code point.
func escapeNonASCII(s string, form nonASCII) string {
	b := make([]byte, 0, 2*len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
		case form == entityDec:
			b = append(strconv.AppendInt(append(b, "&#"...), int64(r), 10), ';')
		case form == entityHex:
			b = append(strconv.AppendInt(append(b, "&#x"...), int64(r), 16), ';')
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			b = appendUnit(appendUnit(b, hi, form), lo, form)
		default:
			b = appendUnit(b, r, form)
		}
	}
	return string(b)
}

// appendUnit appends the JSON escape of the UTF-16 unit u: \u and four hex digits.
func appendUnit(b []byte, u rune, form nonASCII) []byte {
	digits := "0123456789abcdef"
	if form == jsonUpper {
		digits = "0123456789ABCDEF"
	}
	return append(b, '\\', 'u', digits[u>>12&15], digits[u>>8&15], digits[u>>4&15], digits[u&15])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerEscapes lower-cases the hex digits of percent escapes ("%2F" -> "%2f").
func lowerEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if 'A' <= b[j] && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

func sortByLenDesc(forms []string) {
	for i := 1; i < len(forms); i++ {
		for j := i; j > 0 && len(forms[j]) > len(forms[j-1]); j-- {
			forms[j], forms[j-1] = forms[j-1], forms[j]
		}
	}
}

// redactQuotes replaces every maximal run of s covered by QuoteWindow-byte windows that
// occur in one of the forms.
func redactQuotes(s string, forms []string) string {
	if len(s) < QuoteWindow {
		return s
	}
	// Index the message's windows (at most 4 KiB of them), then slide over each form once.
	at := make(map[string][]int, len(s)-QuoteWindow+1)
	for i := 0; i+QuoteWindow <= len(s); i++ {
		w := s[i : i+QuoteWindow]
		at[w] = append(at[w], i)
	}
	covered := make([]bool, len(s))
	hit := false
	for _, f := range forms {
		for i := 0; i+QuoteWindow <= len(f); i++ {
			w := f[i : i+QuoteWindow]
			for _, j := range at[w] {
				hit = true
				for k := j; k < j+QuoteWindow; k++ {
					covered[k] = true
				}
			}
			delete(at, w) // each window of s is marked once: linear, whatever the input
			if len(at) == 0 {
				break
			}
		}
	}
	if !hit {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		for i < len(s) && covered[i] {
			i++
		}
		b.WriteString(Redaction)
	}
	return b.String()
}
