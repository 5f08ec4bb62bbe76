package escouade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/strictjson"
)

// Decide asks every plugin with permissions.decide that is on for
// about.Project (required) whether req may go ahead, all at once, within
// 500 ms: a deny wins; then an ask, a silence, an answer that does not
// hold, or a plugin that cannot answer (restarting, or disabled until
// Plugin.Stop removes it) means ask, so that a decision fails closed;
// allow needs every plugin's allow, and no plugin to ask means ask. The
// decision carries the message and id of the first to deny, else the
// first by id. An error is for a request that cannot be asked.
func (h *Host) Decide(ctx context.Context, req protocol.PermissionRequest, about About) (protocol.Decision, error) {
	if about.Project == "" {
		return protocol.Decision{}, fmt.Errorf("escouade: Decide: %w: the request names no project", ErrNoProject)
	}
	if req.ID == "" || req.Kind == "" {
		return protocol.Decision{}, errors.New("escouade: Decide: a request needs an id and a kind")
	}
	project, err := h.project(ctx, about.Project)
	if err != nil {
		return protocol.Decision{}, err
	}
	var deciders []*Plugin
	for _, p := range *h.deciders.Load() {
		if project.On(p.m.ID) {
			deciders = append(deciders, p)
		}
	}
	if len(deciders) == 0 {
		return protocol.Decision{Verdict: protocol.Ask}, nil
	}
	params, err := appendDecideParams(make([]byte, 0, 256), &req, project, about)
	if err != nil {
		return protocol.Decision{}, fmt.Errorf("escouade: Decide: %w", err)
	}
	// Each call times out on its own, after the method's timeout: the
	// plugins are asked at the same moment, so they share the deadline.
	if len(deciders) == 1 {
		return deciders[0].decide(ctx, params, req.ID), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make([]protocol.Decision, len(deciders))
	type answer struct {
		i int
		d protocol.Decision
	}
	ch := make(chan answer, len(deciders))
	for i, p := range deciders {
		go func() { ch <- answer{i, p.decide(ctx, params, req.ID)} }()
	}
	for range deciders {
		a := <-ch
		if a.d.Verdict == protocol.Deny {
			return a.d, nil // the others' answers cannot change it
		}
		answers[a.i] = a.d
	}
	for i := range answers {
		if answers[i].Verdict == protocol.Ask {
			if answers[i].Plugin != "" {
				return answers[i], nil
			}
			return protocol.Decision{Verdict: protocol.Ask}, nil
		}
	}
	return answers[0], nil
}

// appendDecideParams encodes the params of permissions/decide, once for
// every plugin asked: by hand, but for the request's input.
func appendDecideParams(b []byte, req *protocol.PermissionRequest, project *ProjectInfo, about About) ([]byte, error) {
	b = append(b, `{"request":{"id":`...)
	b = strictjson.AppendString(b, req.ID)
	b = append(b, `,"kind":`...)
	b = strictjson.AppendString(b, req.Kind)
	if req.Tool != "" {
		b = append(b, `,"tool":`...)
		b = strictjson.AppendString(b, req.Tool)
	}
	if req.Input != nil {
		in, err := json.Marshal(req.Input)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"input":`...)
		b = append(b, in...)
	}
	b = append(b, '}')
	b = appendAbout(b, project, about)
	return append(b, '}'), nil
}

// decide asks p, and turns every failure into an ask, journaled.
func (p *Plugin) decide(ctx context.Context, params []byte, id string) protocol.Decision {
	inst := p.cur.Load()
	if inst == nil {
		state := p.State()
		p.j.say(slog.LevelWarn, "permissions/decide: the plugin is not running; counted as ask",
			slog.String("request", id), slog.String("state", state.String()))
		return protocol.Decision{Verdict: protocol.Ask, Plugin: p.m.ID,
			Message: fmt.Sprintf("the plugin %s cannot answer (%s); counted as ask", p.m.ID, state)}
	}
	raw, err := inst.conn.Call(ctx, "permissions/decide", json.RawMessage(params))
	var d protocol.Decision
	if err == nil {
		err = d.UnmarshalJSON(raw)
	}
	if err != nil {
		why := "permissions/decide failed; counted as ask"
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jsonrpc.ErrTimeout) {
			why = "permissions/decide: no answer in time; counted as ask"
		}
		p.j.say(slog.LevelWarn, why, slog.String("request", id), slog.String("error", err.Error()))
		return protocol.Decision{Verdict: protocol.Ask}
	}
	d.Plugin = p.m.ID
	return d
}
