package recovery

import (
	"strings"
	"unicode"

	"github.com/fanyi-go/translate/internal/lang"
)

// Known-answer probes. Each probe round also checks the pairs that carry an engine's
// traffic: up to KnownPerRound pairs per engine and round (those a probe marked down first,
// then the busiest of the last fold), each one call of a short sentence whose answer must
// keep its placeholder and its number, must not echo the source, and must be written in
// the target's script. A wrong answer marks the pair down at once; a right one lifts the
// mark.
const KnownPerRound = 4

// knownSentences are the known-answer probes' sentences by source language; a pair whose
// source has none (and is not detected) is not probed. A detected source is sent English.
var knownSentences = map[string]string{
	"en": "Your order {id} with 3 items ships today.",
	"de": "Ihre Bestellung {id} mit 3 Artikeln wird heute versandt.",
	"fr": "Votre commande {id} de 3 articles part aujourd'hui.",
	"es": "Su pedido {id} con 3 artículos se envía hoy.",
	"pt": "O seu pedido {id} com 3 itens é enviado hoje.",
	"it": "Il tuo ordine {id} con 3 articoli parte oggi.",
	"ru": "Ваш заказ {id} из 3 товаров отправляется сегодня.",
	"zh": "您的订单 {id} 共 3 件商品，今天发货。",
	"ja": "ご注文 {id} の商品 3 点は本日発送されます。",
}

// KnownSentence is the known-answer probes' sentence from the base language base ("en"),
// "" when there is none.
func KnownSentence(base string) string { return knownSentences[base] }

// Known is the known-answer probe of pair (a lang.PairKey of c's ids): its source (nil for
// a detected source, sent English), its target and its sentence; ok is false when the pair
// has none.
func Known(c *lang.Cache, pair uint64) (src, tgt *lang.Info, text string, ok bool) {
	srcID, tgtID := int(pair>>32), int(uint32(pair))
	if tgt = LangByID(c, tgtID); tgt == nil {
		return nil, nil, "", false
	}
	text = knownSentences["en"]
	if srcID != 0 {
		if src = LangByID(c, srcID); src == nil {
			return nil, nil, "", false
		}
		base, _ := src.Tag.Base()
		if text = knownSentences[base.String()]; text == "" {
			return nil, nil, "", false
		}
	}
	return src, tgt, text, true
}

// LangByID is the language c interned as id: its base language's when that is the same
// key ("ja" for "ja-Jpan"), else the key's own ("zh-Hant"); nil when there is none.
func LangByID(c *lang.Cache, id int) *lang.Info {
	key, ok := c.Key(id)
	if !ok {
		return nil
	}
	base, _, _ := strings.Cut(key, "-")
	if in, err := c.Lookup(base); err == nil && in.ID == id {
		return in
	}
	if in, err := c.Lookup(key); err == nil && in.ID == id {
		return in
	}
	return nil
}

// KnownAnswer checks a known-answer probe's answer got to text beyond the usual output
// checks: every digit of text is kept, and the answer has a letter of script (the target's
// scripts) when script is not nil.
func KnownAnswer(text, got string, script []*unicode.RangeTable) bool {
	for _, d := range text {
		if unicode.IsDigit(d) && !strings.ContainsRune(got, d) {
			return false
		}
	}
	if script == nil {
		return true
	}
	for _, ch := range got {
		if unicode.IsLetter(ch) && unicode.In(ch, script...) {
			return true
		}
	}
	return false
}
