package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/deepl"
	"github.com/fanyi-go/translate/engines/fake"
	"github.com/fanyi-go/translate/engines/google"
	"github.com/fanyi-go/translate/engines/openai"
)

// setup is the Client's options and what the program says about its engines.
type setup struct {
	opts      []translate.Option
	used      []string // one line per engine
	simulated bool
}

// profiled is what every adapter in engines/ provides besides translate.Engine.
type profiled interface {
	translate.Engine
	Profile() translate.Profile
}

// fromEnvironment uses the real engines whose settings getenv has and, when there are
// none, the simulated ones. It warns on w about settings it cannot use; values of the
// variables never appear in the warnings.
func fromEnvironment(getenv func(string) string, w io.Writer) setup {
	var st setup
	add := func(source string, e profiled, err error) {
		if err != nil {
			fmt.Fprintf(w, "warning: %s: %v\n", source, err)
			return
		}
		st.opts = append(st.opts, translate.WithEngine(e, e.Profile()))
		kind := "answers whole segments"
		if _, ok := e.(translate.StreamEngine); ok {
			kind = "streams"
		}
		st.used = append(st.used, fmt.Sprintf("%s (real, from %s; %s)", e.Name(), source, kind))
	}
	switch key, model := getenv("OPENAI_API_KEY"), getenv("OPENAI_MODEL"); {
	case key != "" && model != "":
		source := "OPENAI_API_KEY+OPENAI_MODEL"
		var opts []openai.Option
		if u := getenv("OPENAI_BASE_URL"); u != "" {
			opts = append(opts, openai.WithBaseURL(u))
			source += "+OPENAI_BASE_URL"
		}
		e, err := openai.New(key, model, opts...)
		add(source, e, err)
	case key != "" || model != "":
		fmt.Fprintln(w, "warning: OPENAI_API_KEY and OPENAI_MODEL go together; the OpenAI engine is skipped")
	}
	if k := getenv("DEEPL_AUTH_KEY"); k != "" {
		e, err := deepl.New(k)
		add("DEEPL_AUTH_KEY", e, err)
	}
	if k := getenv("GOOGLE_API_KEY"); k != "" {
		e, err := google.New(k)
		add("GOOGLE_API_KEY", e, err)
	}
	if len(st.opts) == 0 {
		return simulated(25 * time.Millisecond)
	}
	return st
}

// simulated is the setup without vendor keys: "llm" streams its answers word by word,
// perWord apart, and breaks off half-way on one text in four; "steady", a last-resort
// engine, answers a segment whole after a short wait.
func simulated(perWord time.Duration) setup {
	llm := &streamingFake{
		Engine:  fake.New("llm", fake.WithLatency(4*perWord)), // the time to the first word
		perWord: perWord,
		breaks:  func(text string) bool { return hash(text)%4 == 0 },
	}
	steady := fake.New("steady", fake.WithLatency(10*perWord))
	return setup{
		opts: []translate.Option{
			// A call of the simulated model takes at most 210 characters, so the sample's
			// paragraphs (25 to 206 characters) stream one by one instead of being merged
			// into segments of up to 1,000 characters, as they are for an engine with no
			// smaller limit.
			translate.WithEngine(llm, translate.Profile{Quality: 90, Timeout: 30 * time.Second, MaxChars: 210}),
			translate.WithEngine(steady, translate.Profile{Quality: 70, FallbackOnly: true}),
		},
		used: []string{
			fmt.Sprintf("llm (simulated; streams a word every %v, breaks off half-way on one text in four)", perWord),
			"steady (simulated; last resort, answers whole segments)",
		},
		simulated: true,
	}
}

// hash is the FNV-1a hash of text.
func hash(text string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(text))
	return h.Sum32()
}

// streamingFake is a simulated LLM: a fake.Engine whose answers TranslateStream yields word
// by word, perWord apart, breaking off half-way with KindUnavailable on the texts breaks
// picks. Translate (used for texts sent together) answers whole, as the fake does.
type streamingFake struct {
	*fake.Engine
	perWord time.Duration
	breaks  func(text string) bool
}

var _ translate.StreamEngine = (*streamingFake)(nil)

// TranslateStream implements translate.StreamEngine.
func (s *streamingFake) TranslateStream(ctx context.Context, req *translate.EngineRequest) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		res, err := s.Translate(ctx, req)
		if err != nil {
			yield("", err)
			return
		}
		words := strings.SplitAfter(res.Texts[0], " ")
		for i, w := range words {
			if i == len(words)/2 && s.breaks(req.Texts[0]) {
				yield("", &translate.Error{Kind: translate.KindUnavailable, Engine: s.Name(), Message: "simulated: the stream broke off"})
				return
			}
			if i > 0 && !wait(ctx, s.perWord) {
				yield("", ctx.Err())
				return
			}
			if !yield(w, nil) {
				return
			}
		}
	}
}

// wait waits d and reports true, or false as soon as ctx is done.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
