package nettrace

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// foldedRecords folds records as 'nettrace stacks --profile K --by-label' does: label root, stack, value.
func foldedRecords(recs []ProfileRecord, label func(ProfileRecord) string) []string {
	w := map[string]int64{}
	for _, r := range recs {
		parts := []string{label(r)}
		for i := len(r.Frames) - 1; i >= 0; i-- {
			parts = append(parts, frameName(r.Frames[i]))
		}
		w[strings.Join(parts, ";")] += r.Value
	}
	var out []string
	for k, v := range w {
		out = append(out, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(out)
	return out
}

func toolFolded(t *testing.T, path string, args ...string) []string {
	t.Helper()
	out := strings.Split(strings.TrimSuffix(string(cli(t, append(append([]string{"stacks", "--profile",
		"exceptions", "--by-label"}, args...), path)...)), "\n"), "\n")
	sort.Strings(out)
	return out
}

func TestProfileMessagesAndWindow(t *testing.T) {
	path := corpusFile(t, "profile-exceptions.nettrace")
	withMessage := func(r ProfileRecord) string { return r.Label + ": " + r.Message }
	whole, err := ParseProfileFile(path, ProfileOptions{ExceptionMessages: true})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	if len(whole.Records) == 0 {
		t.Fatal("no records")
	}
	for _, r := range whole.Records {
		if r.Kind != "exceptions" || r.Message == "" {
			t.Fatalf("record %+v: want an exception with its message", r)
		}
	}
	if got, want := foldedRecords(whole.Records, withMessage), toolFolded(t, path, "--messages"); strings.Join(got,
		"\n") != strings.Join(want, "\n") {
		t.Errorf("records differ from the tool's:\n%v\n%v", got, want)
	}
	all, _ := whole.Totals("exceptions")
	times := make([]int64, 0, len(whole.Records))
	for _, r := range whole.Records {
		times = append(times, r.TimeNS)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	from := fmt.Sprintf("@%d", times[len(times)/2])
	p, err := ParseProfileFile(path, ProfileOptions{From: from})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	part, _ := p.Totals("exceptions")
	if part.Events == 0 || part.Events >= all.Events {
		t.Fatalf("the window from %s holds %d of %d throws", from, part.Events, all.Events)
	}
	for _, r := range p.Records {
		if r.Message != "" {
			t.Fatalf("a message without ExceptionMessages: %+v", r)
		}
	}
	label := func(r ProfileRecord) string { return r.Label }
	if got, want := foldedRecords(p.Records, label), toolFolded(t, path, "--from", from); strings.Join(got,
		"\n") != strings.Join(want, "\n") {
		t.Errorf("windowed records differ from the tool's:\n%v\n%v", got, want)
	}
	if _, err := ParseProfileFile(path, ProfileOptions{To: "2"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("To: \"2\": %v", err)
	}
	if _, err := p.Totals("cpu"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Totals(cpu): %v", err)
	}
}
