package loader

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// ModelOptions configure OpenModel.
type ModelOptions struct {
	Options
	// BaseURL points an OpenAI-compatible provider (vLLM, llama.cpp server,
	// LM Studio, Ollama's /v1) or ollama at a server. With a base URL the
	// openai provider does not require OPENAI_API_KEY.
	BaseURL string
	// RulesFile is the scripted provider's rules file. Default:
	// $ENGINE_LLM_RULES.
	RulesFile string
	// Extra are further plugin-specific options, sent as they are.
	Extra map[string]string
	// RequestTimeout bounds one request to the provider inside the plugin
	// (option "timeout"; 0: the plugin's default, 120s for plugins/llm).
	// The engine puts its own deadline on each call too.
	RequestTimeout time.Duration
	// MaxTokens caps each answer's length (option "max_tokens"; 0: the
	// plugin's default, 4096 for plugins/llm).
	MaxTokens int
}

// Model is an LLM plugin running as a subprocess. It implements
// engine.Model; Close kills the subprocess.
type Model struct {
	p       *proc
	rpc     *shared.ModelClient
	info    shared.Info
	model   string
	timeout time.Duration
}

var _ engine.Model = (*Model)(nil)

// ParseSpec splits "provider[:model]".
func ParseSpec(spec string) (provider, model string, err error) {
	provider, model, _ = strings.Cut(strings.TrimSpace(spec), ":")
	if provider == "" {
		return "", "", fmt.Errorf("llm %q: want PROVIDER[:MODEL], e.g. openai:gpt-4o-mini or scripted", spec)
	}
	return provider, model, nil
}

// OpenModel starts the LLM plugin for spec ("provider[:model]") and opens
// the model: it fails here, not at the first call, when a key is missing.
func OpenModel(ctx context.Context, spec string, opts ModelOptions) (*Model, error) {
	provider, model, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	c, err := opts.find(shared.KindLLM, provider)
	if err != nil {
		return nil, err
	}
	p, err := start(ctx, opts.Options, c)
	if err != nil {
		return nil, err
	}
	m, err := openModel(ctx, p, model, opts)
	if err != nil {
		p.kill()
		return nil, err
	}
	return m, nil
}

func openModel(ctx context.Context, p *proc, model string, opts ModelOptions) (*Model, error) {
	raw, err := p.dispense(shared.KindLLM)
	if err != nil {
		return nil, err
	}
	m := &Model{p: p, rpc: raw.(*shared.ModelClient), model: model, timeout: opts.CallTimeout}
	if m.timeout <= 0 {
		m.timeout = 5 * time.Minute
	}
	err = p.call(ctx, shared.KindLLM, "Describe", opts.startTimeout(), func(ctx context.Context) error {
		var err error
		m.info, err = m.rpc.Describe(ctx)
		return err
	})
	if shared.IsUnimplemented(err) {
		return nil, fmt.Errorf("%s does not serve the Model service (is it a browser plugin?)", p.c.label(""))
	}
	if err != nil {
		return nil, err
	}
	if err := p.checkInfo(shared.KindLLM, m.info); err != nil {
		return nil, err
	}
	options := map[string]string{}
	for k, v := range opts.Extra {
		options[k] = v
	}
	if model != "" {
		options[shared.OptModel] = model
	}
	if opts.BaseURL != "" {
		options[shared.OptBaseURL] = opts.BaseURL
	}
	if opts.RequestTimeout > 0 {
		options[shared.OptTimeout] = opts.RequestTimeout.String()
	}
	if opts.MaxTokens > 0 {
		options[shared.OptMaxTokens] = strconv.Itoa(opts.MaxTokens)
	}
	rules := opts.RulesFile
	if rules == "" {
		rules = os.Getenv(EnvRules)
	}
	if rules != "" {
		options[shared.OptRulesFile] = absPath(rules)
	}
	if err := p.call(ctx, shared.KindLLM, "Open", opts.startTimeout(), func(ctx context.Context) error {
		return m.rpc.Open(ctx, options)
	}); err != nil {
		return nil, err
	}
	return m, nil
}

// Info is the plugin's Describe answer.
func (m *Model) Info() shared.Info { return m.info }

// Complete implements engine.Model.
func (m *Model) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	var resp *engine.ModelResponse
	err := m.p.call(ctx, shared.KindLLM, "Complete", m.timeout, func(ctx context.Context) error {
		var err error
		resp, err = m.rpc.Complete(ctx, req)
		return err
	})
	if after, ok := shared.IsRetryable(err); ok {
		return nil, &engine.ModelError{Err: err, Temporary: true, RetryAfter: after}
	}
	return resp, err
}

// Close ends the subprocess. It is safe to call more than once.
func (m *Model) Close() error {
	m.p.stop()
	return nil
}

// Pid is the plugin process's id, 0 once it is gone.
func (m *Model) Pid() int { return m.p.pid() }
