package memory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustMemory(t *testing.T, o Options) *Memory {
	t.Helper()
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScore(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "abc", 1},
		{"abc", "", 0},
		{"kitten", "sitting", 1 - 3.0/7},
		{"café", "cafe\u0301", 1}, // NFC: the same text
		{"日本語", "日本人", 1 - 1.0/3}, // code points, not bytes
		{"aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaab", 0.95},
	}
	for _, tt := range tests {
		if got := Score(tt.a, tt.b); !close(got, tt.want) {
			t.Errorf("Score(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func close(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// twenty is a text of 20 code points; its variants differ by 1, 2 and 0 edits.
const twenty = "Add to cart for 9 €."

func TestLookupExactAndFuzzy(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{})
	e := Entry{Source: "en", Target: "de", Text: twenty, Translation: "In den Warenkorb für 9 €.", Engine: "deepl"}
	if err := m.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		threshold  float64
		score      float64 // 0: no match
	}{
		{"exact", twenty, DefaultThreshold, 1},
		{"exact, other case of language tags", twenty, 1, 1},
		{"one edit in 20: at the threshold", "Add to cart for 8 €.", DefaultThreshold, 0.95},
		{"two edits in 20: below", "Add to cart for 88 €", DefaultThreshold, 0},
		{"one edit in 20, threshold above", "Add to cart for 8 €.", 0.96, 0},
		{"one edit in 20, threshold below", "Add to cart for 8 €.", 0.9, 0.95},
		{"exact only", "Add to cart for 8 €.", 1, 0},
	}
	for _, tt := range tests {
		src, tgt := "en", "de"
		if strings.Contains(tt.name, "other case") {
			src, tgt = "EN", "De"
		}
		got, ok, err := m.Lookup(ctx, src, tgt, tt.text, tt.threshold)
		if err != nil {
			t.Fatal(err)
		}
		if tt.score == 0 {
			if ok {
				t.Errorf("%s: matched %+v", tt.name, got)
			}
			continue
		}
		if !ok || !close(got.Score, tt.score) || got.Entry != e || got.Exact() != (tt.score == 1) {
			t.Errorf("%s: got %+v, %v; want score %v", tt.name, got, ok, tt.score)
		}
	}
	if _, ok, _ := m.Lookup(ctx, "en", "fr", twenty, 0.5); ok {
		t.Error("matched across language pairs")
	}
	if _, _, err := m.Lookup(ctx, "en", "de", twenty, 0); err == nil {
		t.Error("threshold 0 accepted")
	}
}

// TestThresholdRounding: 1 edit in 10 code points scores exactly 0.9, which 1 - 0.9 in
// floating point would put out of reach without care.
func TestThresholdRounding(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{})
	m.Put(ctx, Entry{Source: "en", Target: "de", Text: "0123456789", Translation: "t"})
	got, ok, _ := m.Lookup(ctx, "en", "de", "012345678X", 0.9)
	if !ok || !close(got.Score, 0.9) {
		t.Errorf("got %+v, %v", got, ok)
	}
}

func TestBestFuzzy(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{})
	for _, s := range []string{"Add to cart for 7 €!", "Add to cart for 8 €.", "Something else entirely"} {
		m.Put(ctx, Entry{Source: "en", Target: "de", Text: s, Translation: "x"})
	}
	got, ok, _ := m.Lookup(ctx, "en", "de", twenty, 0.9)
	if !ok || got.Text != "Add to cart for 8 €." {
		t.Errorf("best = %+v, %v", got, ok)
	}
}

func TestBounds(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{MaxEntries: 3})
	for i := range 5 {
		m.Put(ctx, Entry{Source: "en", Target: "de", Text: fmt.Sprint("text ", i), Translation: "t"})
	}
	m.Lookup(ctx, "en", "de", "text 2", 1) // 2 becomes the most recent
	m.Put(ctx, Entry{Source: "en", Target: "de", Text: "text 5", Translation: "t"})
	var texts []string
	for _, e := range m.Entries() {
		texts = append(texts, e.Text)
	}
	if diff := cmp.Diff([]string{"text 4", "text 2", "text 5"}, texts); diff != "" {
		t.Errorf("entries, least recent first (-want +got):\n%s", diff)
	}

	b := mustMemory(t, Options{MaxBytes: 1 << 10})
	big := strings.Repeat("x", 300) // 300 + 4*300 bytes: more than 1 KiB
	if err := b.Put(ctx, Entry{Text: big}); err != ErrTooLarge {
		t.Errorf("oversized entry: %v", err)
	}
	for i := range 100 {
		b.Put(ctx, Entry{Source: "en", Target: "de", Text: fmt.Sprint(strings.Repeat("y", 20), i), Translation: "z"})
		if b.Bytes() > 1<<10 {
			t.Fatalf("after %d puts: %d bytes", i, b.Bytes())
		}
	}
	if b.Len() == 0 || b.Len() == 100 {
		t.Errorf("len %d", b.Len())
	}
	// Replacing an entry does not count it twice.
	n := b.Bytes()
	last := fmt.Sprint(strings.Repeat("y", 20), 99)
	b.Put(ctx, Entry{Source: "en", Target: "de", Text: last, Translation: "z"})
	if b.Bytes() != n {
		t.Errorf("replace: %d bytes, want %d", b.Bytes(), n)
	}
	fresh := mustMemory(t, Options{})
	e := Entry{Source: "en", Target: "de", Text: "abc", Translation: "xyz"}
	fresh.Put(ctx, e)
	one := fresh.Bytes()
	fresh.Put(ctx, e)
	if fresh.Bytes() != one || fresh.Len() != 1 || one != 2+2+3+3+4*3 {
		t.Errorf("put twice: %d bytes (once: %d), %d entries", fresh.Bytes(), one, fresh.Len())
	}
	for _, o := range []Options{{MaxEntries: -1}, {MaxBytes: 10}, {MaxFuzzyRunes: 1 << 30}} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestFuzzyLength(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{MaxFuzzyRunes: 10})
	m.Put(ctx, Entry{Source: "en", Target: "de", Text: "0123456789ab", Translation: "t"})
	if _, ok, _ := m.Lookup(ctx, "en", "de", "0123456789aX", 0.5); ok {
		t.Error("a text over MaxFuzzyRunes matched fuzzily")
	}
	if _, ok, _ := m.Lookup(ctx, "en", "de", "0123456789ab", 0.5); !ok {
		t.Error("a long text did not match exactly")
	}
}

func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{MaxEntries: 50})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				text := fmt.Sprintf("segment %d of %d", i%70, g)
				m.Put(ctx, Entry{Source: "en", Target: "de", Text: text, Translation: "t"})
				m.Lookup(ctx, "en", "de", text+"!", 0.9)
			}
		}()
	}
	wg.Wait()
	if m.Len() > 50 {
		t.Errorf("len %d", m.Len())
	}
}

func TestContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := mustMemory(t, Options{})
	if err := m.Put(ctx, Entry{Text: "a"}); err != context.Canceled {
		t.Errorf("Put: %v", err)
	}
	if _, _, err := m.Lookup(ctx, "en", "de", "a", 1); err != context.Canceled {
		t.Errorf("Lookup: %v", err)
	}
}

func TestTMXRoundTrip(t *testing.T) {
	ctx := context.Background()
	m := mustMemory(t, Options{})
	entries := []Entry{
		{Source: "en", Target: "de", Text: "Hello <world> & \"you\"", Translation: "Hallo <Welt> & „du“", Engine: "deepl"},
		{Source: "en-US", Target: "ja", Text: "Line one\nline two", Translation: "一行目\n二行目"},
		{Source: "fr", Target: "en", Text: "  spaces kept  ", Translation: "  kept  ", Engine: "apertium"},
	}
	for _, e := range entries {
		m.Put(ctx, e)
	}
	var buf bytes.Buffer
	if err := m.ExportTMX(&buf); err != nil {
		t.Fatal(err)
	}
	back := mustMemory(t, Options{})
	stored, skipped, err := back.ImportTMX(ctx, &buf)
	if err != nil || stored != 3 || skipped != 0 {
		t.Fatalf("import: %d stored, %d skipped, %v\n%s", stored, skipped, err, buf.String())
	}
	if diff := cmp.Diff(entries, back.Entries()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestTMXImport(t *testing.T) {
	doc := `<?xml version="1.0"?>
<tmx version="1.4"><header srclang="en" creationtool="x" creationtoolversion="1" segtype="sentence" o-tmf="x" adminlang="en" datatype="plaintext"/>
<body>
 <tu><tuv xml:lang="en"><seg>Save</seg></tuv><tuv xml:lang="de"><seg>Speichern</seg></tuv><tuv xml:lang="fr"><seg>Enregistrer</seg></tuv></tu>
 <tu srclang="de"><tuv xml:lang="en"><seg>Open</seg></tuv><tuv xml:lang="de"><seg>Öffnen</seg></tuv></tu>
 <tu><tuv xml:lang="en"><seg>Click <bpt i="1">&lt;b&gt;</bpt>here<ept i="1">&lt;/b&gt;</ept></seg></tuv><tuv xml:lang="de"><seg>Hier</seg></tuv></tu>
 <tu><tuv xml:lang="it"><seg>Ciao</seg></tuv><tuv xml:lang="de"><seg>Hallo</seg></tuv></tu>
</body></tmx>`
	var got []Entry
	skipped, err := ImportTMX(strings.NewReader(doc), func(e Entry) error { got = append(got, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Source: "en", Target: "de", Text: "Save", Translation: "Speichern"},
		{Source: "en", Target: "fr", Text: "Save", Translation: "Enregistrer"},
		{Source: "de", Target: "en", Text: "Öffnen", Translation: "Open"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if skipped != 4 {
		t.Errorf("skipped %d, want 4 (inline markup: 2, no source: 2)", skipped)
	}
	if _, err := ImportTMX(strings.NewReader("<tmx><body><tu>"), func(Entry) error { return nil }); err == nil {
		t.Error("truncated document accepted")
	}
}

// FuzzScore: the banded distance agrees with the plain one where it says it is in reach.
func FuzzScore(f *testing.F) {
	f.Add("kitten", "sitting", 2)
	f.Add("日本語", "日本", 1)
	f.Fuzz(func(t *testing.T, a, b string, k int) {
		if k < 0 || k > 50 || len(a) > 200 || len(b) > 200 {
			return
		}
		ra, rb := []rune(a), []rune(b)
		full := naive(ra, rb)
		got := levenshtein(ra, rb, k)
		if full <= k && got != full || full > k && got != k+1 {
			t.Fatalf("lev(%q, %q, %d) = %d, full %d", a, b, k, got, full)
		}
	})
}

// naive is the textbook Levenshtein distance.
func naive(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
		}
	}
	return d[len(a)][len(b)]
}
