package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/internal/lang"
)

// Item is one entry of an evaluation set: a source text and one or more references. A plain
// value; the zero Item is not valid (ReadSet checks items).
type Item struct {
	ID     string   `json:"id,omitempty"`    // unique in its set; ReadSet numbers items without one
	Source string   `json:"source"`          // source language, such as "en" or "zh-Hant"
	Target string   `json:"target"`          // target language
	Scene  string   `json:"scene,omitempty"` // a translate.Scene's name; "" means "general"
	Text   string   `json:"text"`            // the source text
	Refs   []string `json:"refs"`            // reference translations; at least one
}

// Pair returns the item's language pair as a PairQuality key has it: "en-es".
func (it Item) Pair() string { return strings.ToLower(it.Source) + "-" + strings.ToLower(it.Target) }

// scene returns the item's scene ("general" when empty).
func (it Item) scene() string {
	if it.Scene == "" {
		return translate.SceneGeneral.String()
	}
	return it.Scene
}

// parseScene returns the Scene named name.
func parseScene(name string) (translate.Scene, bool) {
	for s := translate.SceneGeneral; s <= translate.SceneChat; s++ {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

// maxLine bounds one line of a set or results file.
const maxLine = 1 << 20

// ReadSet reads an evaluation set, in either of two forms (told apart by the first
// character that is not a space):
//
//   - JSON lines: one Item object per line ({"source":"en","target":"es","text":"...","refs":["..."]});
//   - TSV: one item per line, the columns source, target, scene, text, then one or more
//     references; lines starting with '#' are comments.
//
// Blank lines are skipped. Items without an ID get "L<line>". It checks every item: the pair
// (each side a language with an optional script, as in "en-es" or "zh-Hant-en"), the scene,
// a text and a reference, and unique IDs; the error names the line.
func ReadSet(r io.Reader) ([]Item, error) {
	br := bufio.NewReader(r)
	first, err := firstNonSpace(br)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var items []Item
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || first != '{' && strings.HasPrefix(line, "#") {
			continue
		}
		it, err := parseLine(line, first == '{')
		if err == nil {
			if it.ID == "" {
				it.ID = fmt.Sprint("L", n)
			}
			err = it.check()
		}
		if err == nil && seen[it.ID] != 0 {
			err = fmt.Errorf("id %q already on line %d", it.ID, seen[it.ID])
		}
		if err != nil {
			return nil, fmt.Errorf("eval: set line %d: %w", n, err)
		}
		seen[it.ID] = n
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: reading the set: %w", err)
	}
	return items, nil
}

// firstNonSpace drops a UTF-8 byte order mark and peeks at the first byte that is not
// white space (0 for an empty input).
func firstNonSpace(br *bufio.Reader) (byte, error) {
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("eval: reading the set: %w", err)
		}
		if c := b[i-1]; bytes.IndexByte([]byte(" \t\r\n"), c) < 0 {
			return c, nil
		}
	}
}

func parseLine(line string, isJSON bool) (Item, error) {
	var it Item
	if isJSON {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		err := dec.Decode(&it)
		return it, err
	}
	cols := strings.Split(line, "\t")
	if len(cols) < 5 {
		return it, fmt.Errorf("wants 5 or more tab-separated columns (source, target, scene, text, references), got %d", len(cols))
	}
	it = Item{Source: cols[0], Target: cols[1], Scene: cols[2], Text: cols[3], Refs: cols[4:]}
	return it, nil
}

// check validates an item.
func (it Item) check() error {
	if _, _, err := lang.SplitPair(it.Pair()); err != nil || strings.Contains(it.Pair(), "*") {
		return fmt.Errorf("pair %q: %v", it.Pair(), lang.ErrPairKey)
	}
	if _, ok := parseScene(it.scene()); !ok {
		return fmt.Errorf("unknown scene %q", it.Scene)
	}
	if strings.TrimSpace(it.Text) == "" {
		return errors.New("empty text")
	}
	if len(nonEmptyRefs(it.Refs)) == 0 {
		return errors.New("no reference")
	}
	return nil
}

func nonEmptyRefs(refs []string) []string {
	var out []string
	for _, r := range refs {
		if strings.TrimSpace(r) != "" {
			out = append(out, r)
		}
	}
	return out
}
