package lang

import "strings"

// PrivateUse returns tag with subtags added as private-use subtags ("de-Latn" and "legal",
// "formal" give "de-Latn-x-legal-formal"), after those tag has already ("de-x-a" and "b"
// give "de-x-a-b"). Each subtag must be 1 to 8 letters or digits, which PrivateUse does not
// check; no subtags give tag itself.
func PrivateUse(tag string, subtags ...string) string {
	if len(subtags) == 0 {
		return tag
	}
	var b strings.Builder
	b.WriteString(tag)
	if !strings.Contains(tag, "-x-") {
		b.WriteString("-x")
	}
	for _, s := range subtags {
		b.WriteByte('-')
		b.WriteString(s)
	}
	return b.String()
}
