package segment

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want Segments
	}{
		{"empty", "", 10, Segments{}},
		{"blank", " \n\t ", 10, Segments{Prefix: " \n\t "}},
		{"fits", "Hello world.", 100, Segments{Parts: []string{"Hello world."}, Seps: []string{""}}},
		{"fits exactly", "Hello", 5, Segments{Parts: []string{"Hello"}, Seps: []string{""}}},
		{"fits, whitespace moved out", "  Hello.  \n", 6, Segments{Prefix: "  ", Parts: []string{"Hello."}, Seps: []string{"  \n"}}},
		{"no limit", "One. Two.", 0, Segments{Parts: []string{"One. Two."}, Seps: []string{""}}},
		{
			"sentences packed greedily", "One. Two. Three.", 10,
			Segments{Parts: []string{"One. Two.", "Three."}, Seps: []string{" ", ""}},
		},
		{
			"sentences, one per part when only one fits", "First one. Second one. Third one.", 12,
			Segments{Parts: []string{"First one.", "Second one.", "Third one."}, Seps: []string{" ", " ", ""}},
		},
		{
			"exclamation, question, ellipsis", "Wait… what? Yes! Fine.", 12,
			Segments{Parts: []string{"Wait… what?", "Yes! Fine."}, Seps: []string{" ", ""}},
		},
		{
			"closing quote after the stop", `He said "Stop." Then he left.`, 18,
			Segments{Parts: []string{`He said "Stop."`, "Then he left."}, Seps: []string{" ", ""}},
		},
		{
			"no sentence end inside numbers", "Pi is 3.14159 and e is 2.71828 roughly", 20,
			Segments{Parts: []string{"Pi is 3.14159 and e", "is 2.71828 roughly"}, Seps: []string{" ", ""}},
		},
		{
			"paragraphs", "Para one. Still one.\n\nPara two.", 25,
			Segments{Parts: []string{"Para one. Still one.", "Para two."}, Seps: []string{"\n\n", ""}},
		},
		{
			"paragraph preferred over a later sentence end", "A.\nB. C. D.", 8,
			Segments{Parts: []string{"A.", "B. C. D."}, Seps: []string{"\n", ""}},
		},
		{
			"paragraphs packed", "a\nb\nc\nd\ne", 5,
			Segments{Parts: []string{"a\nb\nc", "d\ne"}, Seps: []string{"\n", ""}},
		},
		{
			"clauses", "one, two, three, four", 10,
			Segments{Parts: []string{"one, two,", "three,", "four"}, Seps: []string{" ", " ", ""}},
		},
		{
			"clause preferred over space", "alpha beta; gamma delta", 16,
			Segments{Parts: []string{"alpha beta;", "gamma delta"}, Seps: []string{" ", ""}},
		},
		{
			"spaces", "aaa bbb ccc ddd", 8,
			Segments{Parts: []string{"aaa bbb", "ccc ddd"}, Seps: []string{" ", ""}},
		},
		{
			"very long word", "abcdefghij", 4,
			Segments{Parts: []string{"abcd", "efgh", "ij"}, Seps: []string{"", "", ""}},
		},
		{
			"long word between words", "go supercalifragilistic now", 10,
			Segments{Parts: []string{"go", "supercalif", "ragilistic", "now"}, Seps: []string{" ", "", " ", ""}},
		},
		{
			"chinese sentences", "今天天气很好。我们去公园吧！好的。", 10,
			Segments{Parts: []string{"今天天气很好。", "我们去公园吧！好的。"}, Seps: []string{"", ""}},
		},
		{
			"chinese clauses", "我喜欢苹果，香蕉，还有橙子", 6,
			Segments{Parts: []string{"我喜欢苹果，", "香蕉，", "还有橙子"}, Seps: []string{"", "", ""}},
		},
		{
			"chinese semicolon and fullwidth stop", "第一部分；第二部分．第三部分", 6,
			Segments{Parts: []string{"第一部分；", "第二部分．", "第三部分"}, Seps: []string{"", "", ""}},
		},
		{
			"chinese with closing bracket", "他说：「好。」然后走了。", 8,
			Segments{Parts: []string{"他说：「好。」", "然后走了。"}, Seps: []string{"", ""}},
		},
		{
			"chinese without punctuation", "一二三四五六七八九十", 4,
			Segments{Parts: []string{"一二三四", "五六七八", "九十"}, Seps: []string{"", "", ""}},
		},
		{
			"japanese", "これはペンです。あれは本です。それは机です。", 9,
			Segments{Parts: []string{"これはペンです。", "あれは本です。", "それは机です。"}, Seps: []string{"", "", ""}},
		},
		{
			"japanese comma", "東京、大阪、名古屋、福岡", 6,
			Segments{Parts: []string{"東京、大阪、", "名古屋、福岡"}, Seps: []string{"", ""}},
		},
		{
			"cjk stop followed by space", "你好。 再见。", 3,
			Segments{Parts: []string{"你好。", "再见。"}, Seps: []string{" ", ""}},
		},
		{
			"mixed", "Hello world. 你好世界。Goodbye!", 14,
			Segments{Parts: []string{"Hello world.", "你好世界。Goodbye!"}, Seps: []string{" ", ""}},
		},
		{
			"emoji with skin tone kept whole", "👍🏽👍🏽👍🏽", 3,
			Segments{Parts: []string{"👍🏽", "👍🏽", "👍🏽"}, Seps: []string{"", "", ""}},
		},
		{
			"combining marks kept with their base", "e\u0301e\u0301e\u0301", 3,
			Segments{Parts: []string{"e\u0301", "e\u0301", "e\u0301"}, Seps: []string{"", "", ""}},
		},
		{
			"cluster longer than max is cut anyway", "a\u0301\u0302\u0303", 2,
			Segments{Parts: []string{"a\u0301", "\u0302\u0303"}, Seps: []string{"", ""}},
		},
		{
			"placeholder not cut", "abc{placeholder}def", 10,
			Segments{Parts: []string{"abc", "{placehold", "er}def"}, Seps: []string{"", "", ""}},
		},
		{
			"no cut at a space inside a tag", `see <a href="x">link</a> now`, 12,
			Segments{Parts: []string{"see", `<a href="x">`, "link</a> now"}, Seps: []string{" ", "", ""}},
		},
		{
			"no sentence end past the window", "Hi!!! there", 3,
			Segments{Parts: []string{"Hi!", "!!", "the", "re"}, Seps: []string{"", " ", "", ""}},
		},
		{
			"no clause end past the window", `Ok,"" fine`, 3,
			Segments{Parts: []string{"Ok,", `""`, "fin", "e"}, Seps: []string{"", " ", "", ""}},
		},
		{
			"no clause end inside a tag", `See <a title="x, y">link</a> now`, 14,
			Segments{Parts: []string{"See", `<a title="x, y`, `">link</a> now`}, Seps: []string{" ", "", ""}},
		},
		{
			"no sentence end inside a tag", `Go <a title="A. B">x</a> y`, 18,
			Segments{Parts: []string{"Go", `<a title="A. B">x`, "</a> y"}, Seps: []string{" ", "", ""}},
		},
		{
			"trailing and inner whitespace", "  one.\t two.  ", 5,
			Segments{Prefix: "  ", Parts: []string{"one.", "two."}, Seps: []string{"\t ", "  "}},
		},
		{
			"ideographic space", "第一。\u3000第二。", 3,
			Segments{Parts: []string{"第一。", "第二。"}, Seps: []string{"\u3000", ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.max)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Split(%q, %d) mismatch (-want +got):\n%s", tt.text, tt.max, diff)
			}
			checkInvariants(t, tt.text, tt.max, got)
		})
	}
}

// checkInvariants checks everything Split promises.
func checkInvariants(t *testing.T, text string, max int, s Segments) {
	t.Helper()
	if len(s.Parts) != len(s.Seps) {
		t.Fatalf("%d parts, %d seps", len(s.Parts), len(s.Seps))
	}
	var b strings.Builder
	b.WriteString(s.Prefix)
	for i, p := range s.Parts {
		b.WriteString(p)
		b.WriteString(s.Seps[i])
	}
	if b.String() != text {
		t.Fatalf("round trip: got %q, want %q", b.String(), text)
	}
	if strings.TrimFunc(s.Prefix, unicode.IsSpace) != "" {
		t.Errorf("Prefix %q is not whitespace", s.Prefix)
	}
	for i, p := range s.Parts {
		if max > 0 && utf8.RuneCountInString(p) > max {
			t.Errorf("part %d %q has %d code points, max %d", i, p, utf8.RuneCountInString(p), max)
		}
		if strings.TrimFunc(p, unicode.IsSpace) != p || p == "" {
			t.Errorf("part %d %q is empty or has surrounding whitespace", i, p)
		}
		if strings.TrimFunc(s.Seps[i], unicode.IsSpace) != "" {
			t.Errorf("sep %d %q is not whitespace", i, s.Seps[i])
		}
	}
	if len(s.Parts) == 0 && s.Prefix != text {
		t.Errorf("no parts, but Prefix %q != text", s.Prefix)
	}
	joined, err := s.Join(s.Parts)
	if err != nil || joined != text {
		t.Errorf("Join(Parts) = %q, %v; want the text", joined, err)
	}
}

func TestJoin(t *testing.T) {
	s := Split("  Hello world. How are you?\n\nFine.  ", 13)
	if diff := cmp.Diff([]string{"Hello world.", "How are you?", "Fine."}, s.Parts); diff != "" {
		t.Fatalf("Parts mismatch (-want +got):\n%s", diff)
	}
	got, err := s.Join([]string{"Hola mundo.", "¿Cómo estás?", "Bien."})
	if err != nil {
		t.Fatal(err)
	}
	if want := "  Hola mundo. ¿Cómo estás?\n\nBien.  "; got != want {
		t.Errorf("Join = %q, want %q", got, want)
	}

	if _, err := s.Join([]string{"one"}); err == nil {
		t.Error("Join with too few parts: no error")
	}
	if _, err := s.Join([]string{"1", "2", "3", "4"}); err == nil {
		t.Error("Join with too many parts: no error")
	}
	if _, err := (Segments{Parts: []string{"a"}}).Join([]string{"b"}); err == nil {
		t.Error("Join on Segments without Seps: no error")
	}
	if got, err := (Segments{}).Join(nil); got != "" || err != nil {
		t.Errorf("zero Segments: Join(nil) = %q, %v", got, err)
	}
	blank := Split("   ", 5)
	if got, err := blank.Join(nil); got != "   " || err != nil {
		t.Errorf("blank: Join(nil) = %q, %v", got, err)
	}
}

func FuzzSplit(f *testing.F) {
	seeds := []struct {
		text string
		max  uint8
	}{
		{"", 1},
		{"Hello world. How are you?", 8},
		{"今天天气很好。我们去公园吧！", 4},
		{"a\n\nb\n\nc", 1},
		{"👨\u200d👩\u200d👧 family", 3},
		{"e\u0301\u0302\u0303x", 2},
		{"{name} <b>x</b> %s, 50% off", 5},
		{"\xff\xfe invalid \xc3", 3},
		{"   \t\n  ", 2},
		{"word" + strings.Repeat("x", 100), 7},
		{"He said \"Stop.\" Then.", 6},
		{"Hi {user.first_name}, see <a href=\"/x y\">this</a>.", 9},
		{"{{ count }} {{ count }} {{ count }}", 4},
		{"<b>" + strings.Repeat("x", 70) + "</b>", 16},
		{"a,b;c:d。e，f、g", 2},
		{"\u00a0\u3000lead and trail\u3000\u00a0", 5},
	}
	for _, s := range seeds {
		f.Add(s.text, s.max)
	}
	f.Fuzz(func(t *testing.T, text string, m uint8) {
		max := int(m%64) + 1
		checkInvariants(t, text, max, Split(text, max))
	})
}

func BenchmarkSplit(b *testing.B) {
	para := "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! " +
		"How vexingly quick daft zebras jump? 敏捷的棕色狐狸跳过了懒狗。我们明天见！" +
		"Hello {name}, you have <b>%d</b> new messages; read them, or not.\n\n"
	var sb strings.Builder
	for sb.Len() < 10<<10 {
		sb.WriteString(para)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Split(text, 500)
	}
}

// A blank line is a better break than a single line break, and tiny paragraphs merge into
// parts of up to max code points.
func TestSplitPrefersBlankLinesAndMerges(t *testing.T) {
	got := Split("One two.\n\nThree\nfour five", 20)
	want := Segments{Parts: []string{"One two.", "Three\nfour five"}, Seps: []string{"\n\n", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Split mismatch (-want +got):\n%s", diff)
	}
	tiny := strings.Repeat("x\n\n\n", 1000) // 4,000 code points
	s := Split(tiny, 1000)
	if len(s.Parts) != 4 {
		t.Errorf("1,000 tiny paragraphs split at 1,000 code points: %d parts, want 4", len(s.Parts))
	}
}

// spanAt finds the placeholders and tags that Split never breaks inside.
func TestSpanAt(t *testing.T) {
	tests := []struct {
		name string
		text string
		i    int
		want int
	}{
		{"brace", "a {name} b", 2, 8},
		{"brace at its longest", "{" + strings.Repeat("x", 62) + "}", 0, 64},
		{"brace too long", "{" + strings.Repeat("x", 63) + "}", 0, -1},
		{"empty brace", "{}", 0, -1},
		{"brace unclosed", "{name", 0, -1},
		{"brace across a line", "{a\nb}", 0, -1},
		{"brace holding a brace", "{a{b}", 0, -1},
		{"double brace", "{{ count }} x", 0, 11},
		{"double brace unclosed", "{{name} x", 0, -1},
		{"double brace across a line", "{{a\nb}}", 0, -1},
		{"tag", "<b>x", 0, 3},
		{"closing tag", "x</b>", 1, 5},
		{"comment", "<!-- x -->", 0, 10},
		{"tag with attributes", `<a href="/x y">`, 0, 15},
		{"less than at the end", "a<", 1, -1},
		{"less than before a digit", "<3>", 0, -1},
		{"less than before a space", "a < b > c", 2, -1},
		{"tag unclosed", "<b", 0, -1},
		{"tag across a line", "<b\n>", 0, -1},
		{"tag holding a less than", "<a<b>", 0, -1},
		{"tag at its longest", "<b" + strings.Repeat("x", 509) + ">", 0, 512},
		{"tag too long", "<b" + strings.Repeat("x", 510) + ">", 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, spanAt(tt.text, tt.i)); diff != "" {
				t.Errorf("spanAt(%q, %d) mismatch (-want +got):\n%s", tt.text, tt.i, diff)
			}
		})
	}
}

// isBreakMark is the union of the four mark predicates, over every rune.
func TestIsBreakMark(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isBreakMark(r) != (isLatinStop(r) || isCJKStop(r) || isLatinClause(r) || isCJKClause(r)) {
			t.Fatalf("isBreakMark(%q)", r)
		}
	}
}

func TestAround(t *testing.T) {
	s := Split("\n  One.\n\nTwo.  ", 5)
	var b strings.Builder
	for i, p := range []string{"Un.", "Deux."} {
		b.WriteString(s.Around(i, p))
	}
	if diff := cmp.Diff("\n  Un.\n\nDeux.  ", b.String()); diff != "" {
		t.Errorf("joined (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"\n  ", ""}, []string{s.Lead(0), s.Lead(1)}); diff != "" {
		t.Errorf("leads (-want +got):\n%s", diff)
	}
}
