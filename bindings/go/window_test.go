package nettrace

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// toolTop is 'nettrace top --json -n 0 ARGS PATH': its rows and its table's total.
func toolTop(t *testing.T, path string, args ...string) ([]TopEntry, uint64) {
	t.Helper()
	var out struct {
		Tables []struct {
			Samples uint64
			Methods []struct {
				Name                 string
				Exclusive, Inclusive uint64
			}
		}
	}
	raw := cli(t, append(append([]string{"top", "--json", "-n", "0"}, args...), path)...)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("top --json: %v", err)
	}
	var rows []TopEntry
	for _, m := range out.Tables[0].Methods {
		rows = append(rows, TopEntry{m.Name, m.Exclusive, m.Inclusive})
	}
	return rows, out.Tables[0].Samples
}

func TestTopWallAndWindowMatchTheTool(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	tr := parseFile(t, path)
	defer tr.Close()
	wall, err := tr.WallNS()
	if err != nil || len(wall) != len(tr.Samples) {
		t.Fatalf("WallNS: %d weights for %d samples, %v", len(wall), len(tr.Samples), err)
	}
	from, err := tr.TimeNS("1s")
	if err != nil {
		t.Fatal(err)
	}
	to, err := tr.TimeNS(fmt.Sprintf("@%d", from+1500000000))
	if err != nil || to != from+1500000000 {
		t.Fatalf("TimeNS(@ns) = %d, %v", to, err)
	}
	var inside, insideWall, total uint64
	for i, s := range tr.Samples {
		total += uint64(wall[i])
		if int64(s.Timestamp) >= from && int64(s.Timestamp) < to && len(s.Frames) > 0 {
			inside++
			insideWall += uint64(wall[i])
		}
	}
	for _, c := range []struct {
		o    TopOptions
		args []string
		sum  uint64
	}{
		{TopOptions{ByTime: true}, []string{"--profile", "wall"}, total},
		{TopOptions{FromNS: &from, ToNS: &to}, []string{"--from", "1s", "--to", "2500ms"}, inside},
		{TopOptions{ByTime: true, FromNS: &from, ToNS: &to},
			[]string{"--profile", "wall", "--from", "1s", "--to", fmt.Sprintf("@%d", to)}, insideWall},
	} {
		got, err := tr.TopWith(0, c.o)
		if err != nil {
			t.Fatal(err)
		}
		want, sum := toolTop(t, path, c.args...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: rows differ from the tool's:\n%v\n%v", c.args, got, want)
		}
		var excl uint64
		for _, r := range got {
			excl += r.Exclusive
		}
		if excl != c.sum || sum != c.sum {
			t.Errorf("%v: exclusive sum %d, tool %d, from the samples %d", c.args, excl, sum, c.sum)
		}
	}
	if inside == 0 || inside >= uint64(len(tr.Samples)) {
		t.Fatalf("the window holds %d of %d samples", inside, len(tr.Samples))
	}
	for _, bad := range []string{"2", "-1s", "1h", "@", ""} {
		if _, err := tr.TimeNS(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("TimeNS(%q): %v", bad, err)
		}
	}
}
