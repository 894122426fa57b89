package memory

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// TMX 1.4 (the Translation Memory eXchange format) in its plain-segment subset: each <tu>
// holds a <tuv xml:lang="..."><seg>text</seg></tuv> per language. Export writes one <tu>
// per entry, its source language in the tu's srclang and its engine, when known, in a
// <prop type="x-engine">. Import reads every <tu>: the <tuv> in the tu's srclang (or the
// header's) is the source, and each other <tuv> is a translation of it. A segment holding
// inline markup (<bpt>, <ph>, ...) is skipped and counted, never guessed at.

type tmxDoc struct {
	XMLName xml.Name  `xml:"tmx"`
	Version string    `xml:"version,attr"`
	Header  tmxHeader `xml:"header"`
	Body    []tmxTU   `xml:"body>tu"`
}

type tmxHeader struct {
	CreationTool        string `xml:"creationtool,attr"`
	CreationToolVersion string `xml:"creationtoolversion,attr"`
	SegType             string `xml:"segtype,attr"`
	OTMF                string `xml:"o-tmf,attr"`
	AdminLang           string `xml:"adminlang,attr"`
	SrcLang             string `xml:"srclang,attr"`
	DataType            string `xml:"datatype,attr"`
}

type tmxTU struct {
	SrcLang string    `xml:"srclang,attr,omitempty"`
	Props   []tmxProp `xml:"prop"`
	TUVs    []tmxTUV  `xml:"tuv"`
}

type tmxProp struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

type tmxTUV struct {
	Lang string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
	Seg  tmxSeg `xml:"seg"`
}

type tmxSeg struct {
	Text   string      `xml:",chardata"`
	Inline []tmxInline `xml:",any"`
}

type tmxInline struct {
	XMLName xml.Name
}

const engineProp = "x-engine"

// ExportTMX writes entries as a TMX 1.4 document.
func ExportTMX(w io.Writer, entries []Entry) error {
	doc := tmxDoc{Version: "1.4", Header: tmxHeader{
		CreationTool: "fanyi-go/translate", CreationToolVersion: "1", SegType: "sentence",
		OTMF: "fanyi-go", AdminLang: "en", SrcLang: "*all*", DataType: "plaintext",
	}}
	for _, e := range entries {
		tu := tmxTU{SrcLang: e.Source, TUVs: []tmxTUV{
			{Lang: e.Source, Seg: tmxSeg{Text: e.Text}},
			{Lang: e.Target, Seg: tmxSeg{Text: e.Translation}},
		}}
		if e.Engine != "" {
			tu.Props = []tmxProp{{Type: engineProp, Value: e.Engine}}
		}
		doc.Body = append(doc.Body, tu)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("memory: tmx: %w", err)
	}
	return enc.Close()
}

// ImportTMX reads a TMX document and calls put with each entry, in document order, one
// <tu> in memory at a time. It returns how many segments it skipped (inline markup, no
// source, empty), and stops at put's first error or a syntax error.
func ImportTMX(r io.Reader, put func(Entry) error) (skipped int, err error) {
	d := xml.NewDecoder(r)
	headerLang := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("memory: tmx: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "header":
			headerLang = attr(se, "srclang")
		case "tu":
			var tu tmxTU
			if err := d.DecodeElement(&tu, &se); err != nil {
				return skipped, fmt.Errorf("memory: tmx: %w", err)
			}
			n, err := tu.entries(headerLang, put)
			skipped += n
			if err != nil {
				return skipped, err
			}
		}
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// entries calls put with the entries of one tu and returns how many segments it skipped.
func (tu tmxTU) entries(headerLang string, put func(Entry) error) (int, error) {
	source := tu.source(headerLang)
	if source < 0 || len(tu.TUVs[source].Seg.Inline) > 0 || tu.TUVs[source].Seg.Text == "" {
		return len(tu.TUVs), nil
	}
	engine := tu.prop(engineProp)
	skipped := 0
	s := tu.TUVs[source]
	for i, v := range tu.TUVs {
		if i == source {
			continue
		}
		if len(v.Seg.Inline) > 0 || v.Seg.Text == "" || v.Lang == "" {
			skipped++
			continue
		}
		e := Entry{Source: s.Lang, Target: v.Lang, Text: s.Seg.Text, Translation: v.Seg.Text, Engine: engine}
		if err := put(e); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// ImportTMX reads a TMX document into m (see the package function ImportTMX) and returns
// how many entries it stored and how many segments it skipped.
func (m *Memory) ImportTMX(ctx context.Context, r io.Reader) (stored, skipped int, err error) {
	tooLarge := 0
	skipped, err = ImportTMX(r, func(e Entry) error {
		if err := m.Put(ctx, e); err != nil {
			if errors.Is(err, ErrTooLarge) {
				tooLarge++
				return nil
			}
			return err
		}
		stored++
		return nil
	})
	return stored, skipped + tooLarge, err
}

// ExportTMX writes m's entries as TMX 1.4, least recently used first.
func (m *Memory) ExportTMX(w io.Writer) error { return ExportTMX(w, m.Entries()) }

// source returns the index of the tu's source tuv, or -1.
func (tu tmxTU) source(headerLang string) int {
	src := tu.SrcLang
	if src == "" || src == "*all*" {
		src = headerLang
	}
	for i, v := range tu.TUVs {
		if strings.EqualFold(v.Lang, src) {
			return i
		}
	}
	return -1
}

// prop returns the value of the tu's last prop of type typ, or "".
func (tu tmxTU) prop(typ string) string {
	v := ""
	for _, p := range tu.Props {
		if p.Type == typ {
			v = p.Value
		}
	}
	return v
}
