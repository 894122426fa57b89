// Package enum names the values of the translate package's small enums (Kind, Scene,
// Style, Priority, CostClass): the name tables, and the "kind(42)" text of a value out of
// range. It formats integers without strconv, as the String methods need nothing more.
package enum

// The name tables, indexed by value. The translate package's String methods, metrics and
// configuration keys read them; they must not be modified.
var (
	// Kinds names translate.Kind values, snake_case.
	Kinds = [...]string{
		"unknown", "invalid_input", "unsupported", "unauthorized", "quota_exhausted",
		"rate_limited", "unavailable", "timeout", "text_too_long", "bad_output",
		"budget_exceeded", "no_engine", "canceled", "closed",
	}
	// Scenes names translate.Scene values.
	Scenes = [...]string{"general", "tech", "legal", "ecommerce", "chat"}
	// Styles names translate.Style values.
	Styles = [...]string{"default", "formal", "casual"}
	// Priorities names translate.Priority values.
	Priorities = [...]string{"normal", "high"}
	// Classes names translate.CostClass values.
	Classes = [...]string{"standard", "free", "premium"}
)

// Name returns names[v], or what+"(v)" when v is out of the table ("kind(42)").
func Name(names []string, v int, what string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return what + "(" + Itoa(v) + ")"
}

// Itoa returns n in decimal, as strconv.Itoa does.
func Itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = -u
	}
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
