package nettrace

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// asToolJSON renders a decoded value as 'nettrace events --json' prints it,
// read back by encoding/json with UseNumber.
func asToolJSON(v interface{}) interface{} {
	switch x := v.(type) {
	case []Field:
		m := map[string]interface{}{}
		for _, f := range x {
			m[f.Name] = asToolJSON(f.Value)
		}
		return m
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, e := range x {
			out[i] = asToolJSON(e)
		}
		return out
	case int64, uint64:
		return json.Number(fmt.Sprint(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return json.Number(fmt.Sprintf("%.17g", x))
	case GUID:
		return x.String()
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case FileTime:
		if x < 0 {
			return json.Number(fmt.Sprint(int64(x)))
		}
		t := x.Time()
		return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%07dZ", t.Year(), t.Month(), t.Day(), t.Hour(),
			t.Minute(), t.Second(), int64(x)%10000000)
	}
	return v
}

func TestEventsMatchTheTool(t *testing.T) {
	for _, name := range []string{"event-fields.nettrace", "profile-gc.nettrace"} {
		path := corpusFile(t, name)
		var events []*Event
		p, err := NewParser(Callbacks{Event: func(e *Event) error { events = append(events, e); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(readCorpus(t, name)); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		sort.SliceStable(events, func(i, j int) bool { return events[i].TimeNS < events[j].TimeNS })
		lines := strings.Split(strings.TrimSpace(string(cli(t, "events", "--json", path))), "\n")
		if len(lines) != len(events) || len(lines) < 10 {
			t.Fatalf("%s: %d events, the tool prints %d", name, len(events), len(lines))
		}
		for i, line := range lines {
			d := json.NewDecoder(bytes.NewReader([]byte(line)))
			d.UseNumber()
			var want map[string]interface{}
			if err := d.Decode(&want); err != nil {
				t.Fatal(err)
			}
			e := events[i]
			got := map[string]interface{}{
				"time_ns": json.Number(fmt.Sprint(e.TimeNS)), "thread": json.Number(fmt.Sprint(e.ThreadID)),
				"provider": e.Provider, "event_id": json.Number(fmt.Sprint(e.EventID)),
				"version": json.Number(fmt.Sprint(e.Version)), "name": e.Name, "fields": asToolJSON(e.Fields),
			}
			if got["fields"] == nil {
				got["fields"] = map[string]interface{}{}
			}
			if e.Error != "" {
				got["error"], got["error_offset"] = e.Error, json.Number(fmt.Sprint(e.ErrorOffset))
			} else if e.Leftover > 0 {
				got["leftover"] = json.Number(fmt.Sprint(e.Leftover))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s event %d:\n got %v\nwant %v", name, i, got, want)
			}
		}
	}
}

func TestGCTimelineMatchesTheTool(t *testing.T) {
	path := corpusFile(t, "profile-gc.nettrace")
	p, err := ParseProfileFile(path, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var tool struct {
		GCs []struct {
			Number          uint32  `json:"number"`
			Generation      uint32  `json:"generation"`
			Reason          string  `json:"reason"`
			Type            string  `json:"type"`
			PauseNS         int64   `json:"pause_ns"`
			HeapAfter       *int64  `json:"heap_after"`
			GenerationSizes []int64 `json:"generation_sizes"`
		} `json:"gcs"`
	}
	if err := json.Unmarshal(cli(t, "gc", "--json", path), &tool); err != nil {
		t.Fatal(err)
	}
	if len(p.GCs) != len(tool.GCs) || len(p.GCs) < 5 {
		t.Fatalf("%d GCs, the tool shows %d", len(p.GCs), len(tool.GCs))
	}
	for i, g := range p.GCs {
		w := tool.GCs[i]
		if g.Number != w.Number || g.Generation != w.Generation || g.Reason != w.Reason || g.Type != w.Type ||
			g.PauseNS != w.PauseNS || w.HeapAfter == nil || g.HeapAfter != *w.HeapAfter ||
			!reflect.DeepEqual(g.GenerationSizes[:], w.GenerationSizes) {
			t.Fatalf("GC %d: %+v, the tool: %+v", i, g, w)
		}
	}
}

func TestFramesAreNamedAsTheTool(t *testing.T) {
	for _, path := range corpusFiles(t)[:4] {
		tr := parseFile(t, path)
		var b bytes.Buffer
		for _, s := range tr.Samples {
			kind := "E"
			if s.Managed {
				kind = "M"
			}
			names := make([]string, 0, len(s.Frames))
			for i := len(s.Frames) - 1; i >= 0; i-- {
				names = append(names, s.Frames[i].Name)
			}
			stack := strings.Join(names, ";")
			if stack == "" {
				stack = "-"
			}
			fmt.Fprintf(&b, "%d %d %s %s\n", s.Timestamp, s.ThreadID, kind, stack)
		}
		if !bytes.Equal(b.Bytes(), cli(t, "samples", path)) {
			t.Fatalf("%s: samples named by Frame.Name differ from the tool's", path)
		}
	}
}

func TestParseEvents(t *testing.T) {
	data := readCorpus(t, "event-fields.nettrace")
	var all []*Event
	if err := ParseEvents(bytes.NewReader(data), func(e *Event) error { all = append(all, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("%d events", len(all))
	}
	var some []*Event
	err := ParseEvents(bytes.NewReader(data[:len(data)/2]), func(e *Event) error { some = append(some, e); return nil })
	if !errors.Is(err, ErrTruncated) || len(some) == 0 || !reflect.DeepEqual(some, all[:len(some)]) {
		t.Fatalf("half a stream: %v after %d events", err, len(some))
	}
	stop := errors.New("enough")
	n := 0
	if err := ParseEvents(bytes.NewReader(data), func(*Event) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("a callback's error: %v after %d events", err, n)
	}
}
