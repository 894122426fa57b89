package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The example's promise: the vendor gets HTML with the glossary and fails the check on
// the term it forgets; tagless gets masked text; the page comes back with its structure,
// placeholders and terms.
func TestRun(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b); err != nil {
		t.Fatalf("run: %v", err)
	}
	out := b.String()
	for _, want := range []string{
		`== vendor received 1 text(s) as html with glossary "brands"`,
		"== tagless received 3 text(s) as text",
		// The vendor forgot the glossary term, and its word list also turned the image's
		// src="/img/box.png" into "/img/Box.png": a changed attribute is a lost tag and an
		// extra one.
		"vendor: translate: vendor: bad_output: fidelity: lost 1 markup(s); lost 1 term(s); doubled 1 markup(s)",
		"tagless: ok",
		`<h1 title="Acme Cloud Speicher">Acme Cloud Speicher</h1>`,
		`<p class="lead">Hallo {name}, Ihr Warenkorb enthält {count, plural, one {# Artikel} other {# Artikel}}.</p>`,
		`<img src="/img/box.png" alt="Eine Speicherbox">`,
		`<p><a href="/checkout?ref=page">Jetzt kaufen</a> &amp; sparen 20% mit <b>Acme Cloud</b>.</p>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, tagless, _ := strings.Cut(out, "== tagless"); strings.Contains(strings.Split(tagless, "== attempts")[0], "<") {
		t.Errorf("tagless was sent markup:\n%s", out)
	}
}
