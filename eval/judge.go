package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// JudgePrompt is the judge's fixed system prompt. The user message gives the language
// pair, the source text, the reference translations and the candidate translation, each
// on its own labelled lines; the judge answers with a number alone.
const JudgePrompt = `You are a strict evaluator of machine translation quality.
You are given a source text, one or more reference translations, and a candidate translation.
Rate the candidate's quality from 0 to 100: 100 means a perfect translation (accurate, fluent,
complete, faithful to the meaning of the source), 0 means no translation at all or one unrelated
to the source. References show one correct translation; a different wording that keeps the
meaning is not an error. Reply with the integer score alone, with no other text.`

// maxJudgeReply bounds the judge's HTTP response body read.
const maxJudgeReply = 1 << 20

// Judge asks an OpenAI-compatible chat completions endpoint for a 0..100 score of a
// translation, with JudgePrompt, at temperature 0, under its own budget. Safe for
// concurrent use once built; do not change its fields while it is in use.
type Judge struct {
	BaseURL string // the API base, such as "https://api.openai.com/v1"; required
	Key     string // sent as a Bearer token; "" sends none (a local server)
	Model   string // required
	// Budget is the credits the judge may spend, priced by CostPerMillionTokens over the
	// tokens the endpoint reports; once spent, Score returns ErrJudgeBudget. It is checked
	// before each call, so the calls in flight at that moment may pass it by one call each.
	// 0 means MaxCalls alone bounds the judge.
	Budget               float64
	CostPerMillionTokens float64 // price of prompt and completion tokens alike; 0 means free
	// MaxCalls bounds the calls; 0 means 1000. With neither Budget nor a price it is the
	// judge's budget.
	MaxCalls   int
	HTTPClient *http.Client // nil means http.DefaultClient

	mu    sync.Mutex
	spent float64
	calls int
}

// ErrJudgeBudget is returned by Judge.Score once its Budget or MaxCalls is spent.
var ErrJudgeBudget = errors.New("eval: the judge's budget is spent")

// Spent returns the credits and calls the judge has used.
func (j *Judge) Spent() (credits float64, calls int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.spent, j.calls
}

// admit takes one call from the budget.
func (j *Judge) admit() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	maxCalls := j.MaxCalls
	if maxCalls == 0 {
		maxCalls = 1000
	}
	if j.calls >= maxCalls || j.Budget > 0 && j.spent >= j.Budget {
		return ErrJudgeBudget
	}
	j.calls++
	return nil
}

func (j *Judge) charge(tokens int64) {
	j.mu.Lock()
	j.spent += float64(tokens) * j.CostPerMillionTokens / 1e6
	j.mu.Unlock()
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatReply struct {
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Score asks the judge to score hyp as a translation of it.Text. Its errors never hold the
// key or the texts.
func (j *Judge) Score(ctx context.Context, it Item, hyp string) (float64, error) {
	if err := j.admit(); err != nil {
		return 0, err
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Source language: %s\nTarget language: %s\nSource: %s\n", it.Source, it.Target, it.Text)
	for _, r := range nonEmptyRefs(it.Refs) {
		fmt.Fprintf(&user, "Reference: %s\n", r)
	}
	fmt.Fprintf(&user, "Candidate: %s\n", hyp)
	body, _ := json.Marshal(map[string]any{"model": j.Model, "temperature": 0, "messages": []chatMessage{
		{Role: "system", Content: JudgePrompt}, {Role: "user", Content: user.String()}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(j.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("eval: judge: bad BaseURL")
	}
	req.Header.Set("Content-Type", "application/json")
	if j.Key != "" {
		req.Header.Set("Authorization", "Bearer "+j.Key)
	}
	hc := j.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("eval: judge: %w", errors.Unwrap(err)) // the *url.Error names the URL only
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJudgeReply))
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("eval: judge: HTTP %d", resp.StatusCode)
	}
	var rep chatReply
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Choices) == 0 {
		return 0, errors.New("eval: judge: not a chat completion")
	}
	j.charge(rep.Usage.PromptTokens + rep.Usage.CompletionTokens)
	s, err := strconv.ParseFloat(strings.TrimSpace(rep.Choices[0].Message.Content), 64)
	if err != nil || !(s >= 0 && s <= 100) {
		return 0, errors.New("eval: judge: the reply is not a score within 0..100")
	}
	return s, nil
}
