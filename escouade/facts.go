package escouade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// About says what a fact or a permission request is about.
type About struct {
	Project string           // the project's id, for Projects; "" for none
	Ticket  *protocol.Ticket // nil for none
	Agent   *protocol.Agent  // nil for none
}

// factVersion is the version of every fact's fields: the protocol is at
// the first version of each.
const factVersion = 1

// Fact publishes a fact, one of the protocol's names, with data (what
// encoding/json encodes as an object; nil is {}), to every running plugin
// that lists it in permissions.events and is on for about's project, and
// returns its seq. It never waits for a plugin: one that reads too slowly
// misses the fact, and the journal says so.
func (h *Host) Fact(ctx context.Context, name string, data any, about About) (int64, error) {
	if !protocol.IsFact(name) {
		return 0, fmt.Errorf("%w: %s", ErrUnknownFact, logtext.Quote(name))
	}
	var raw []byte
	switch d := data.(type) {
	case nil:
		raw = []byte("{}")
	case json.RawMessage:
		raw = d
	default:
		var err error
		if raw, err = json.Marshal(d); err != nil {
			return 0, fmt.Errorf("escouade: fact %s: %w", name, err)
		}
	}
	if strictjson.KindOf(raw) != strictjson.KindObject {
		return 0, fmt.Errorf("escouade: fact %s: data must be a JSON object", name)
	}
	if err := strictjson.Validate(raw); err != nil {
		return 0, fmt.Errorf("escouade: fact %s: %w", name, err)
	}
	var project *ProjectInfo
	if about.Project != "" {
		var err error
		if project, err = h.project(ctx, about.Project); err != nil {
			return 0, err
		}
	}
	subs := (*h.facts.Load())[name]

	h.factMu.Lock()
	defer h.factMu.Unlock()
	h.seq++
	seq := h.seq
	params := appendFact(make([]byte, 0, 160+len(raw)), name, seq, h.opts.Clock.Now(), project, about, raw)
	for _, p := range subs {
		inst := p.cur.Load()
		if inst == nil || (project != nil && !project.On(p.m.ID)) {
			continue
		}
		if err := inst.conn.Notify("events/fact", json.RawMessage(params)); err != nil {
			why := "the plugin reads too slowly"
			if errors.Is(err, jsonrpc.ErrClosed) {
				why = "the plugin is ending"
			}
			p.j.limited(p.j.proto, slog.LevelWarn, "fact dropped: "+why, slog.String("fact", name), slog.Int64("seq", seq))
		}
	}
	return seq, nil
}

// appendFact encodes a fact's params by hand: it is the hot path of fan-out,
// done once for all the plugins that receive it.
func appendFact(b []byte, name string, seq int64, at time.Time, project *ProjectInfo, about About, data []byte) []byte {
	b = append(b, `{"name":`...)
	b = strictjson.AppendString(b, name)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, factVersion, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"at":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendAbout(b, project, about)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// appendAbout appends the project, ticket and agent members of a fact or of
// the params of permissions/decide.
func appendAbout(b []byte, project *ProjectInfo, about About) []byte {
	if project != nil {
		b = append(b, `,"project":{"id":`...)
		b = strictjson.AppendString(b, project.ID)
		b = append(b, `,"name":`...)
		b = strictjson.AppendString(b, project.Name)
		b = append(b, `,"private":`...)
		b = strconv.AppendBool(b, project.Private)
		b = append(b, '}')
	}
	if t := about.Ticket; t != nil {
		b = append(b, `,"ticket":{"id":`...)
		b = strictjson.AppendString(b, t.ID)
		b = append(b, `,"key":`...)
		b = strictjson.AppendString(b, t.Key)
		b = append(b, `,"title":`...)
		b = strictjson.AppendString(b, t.Title)
		b = append(b, '}')
	}
	if a := about.Agent; a != nil {
		b = append(b, `,"agent":{"id":`...)
		b = strictjson.AppendString(b, a.ID)
		b = append(b, `,"name":`...)
		b = strictjson.AppendString(b, a.Name)
		b = append(b, '}')
	}
	return b
}
