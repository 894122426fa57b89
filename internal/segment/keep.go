package segment

// Keep returns s, which cuts text, with the parts that a span of text runs across joined
// into one part: no cut falls inside text[sp[0]:sp[1]] for any sp of spans (byte ranges,
// sorted, not overlapping). It returns s as it is when it does not cut text.
func (s Segments) Keep(text string, spans [][2]int) Segments {
	if len(spans) == 0 || len(s.Parts) < 2 || len(s.Seps) != len(s.Parts) {
		return s
	}
	out := Segments{Prefix: s.Prefix, Parts: make([]string, 0, len(s.Parts)), Seps: make([]string, 0, len(s.Seps))}
	pos, from := len(s.Prefix), -1 // where part i starts; where the part being joined starts
	for i, p := range s.Parts {
		end := pos + len(p)
		if end > len(text) || text[pos:end] != p {
			return s
		}
		if from < 0 {
			from = pos
		}
		pos = end + len(s.Seps[i])
		for len(spans) > 0 && spans[0][1] <= end {
			spans = spans[1:]
		}
		if i+1 < len(s.Parts) && len(spans) > 0 && spans[0][0] < end {
			continue // the span runs on into the next part
		}
		out.Parts, out.Seps = append(out.Parts, text[from:end]), append(out.Seps, s.Seps[i])
		from = -1
	}
	return out
}
