package reports

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/locklab/locklab/history"
)

// cxBlock is one finding of a counterexample (an overlap, a lost update)
// with the lines that belong to it, such as the faults that were on while it
// happened: the report shows them together, as one item of the list.
type cxBlock struct {
	Text  string
	Lines []string
}

// size is the number of lines the block shows.
func (b cxBlock) size() int { return 1 + len(b.Lines) }

// faultLine matches a counterexample's line about a fault window, as the
// checks write it: "  during fault: #408 24.397s p-1 start pause ...".
var faultLine = regexp.MustCompile(`^\s*during fault: #(\d+) `)

// ExplanationLines are a counterexample's explanation lines as a summary
// prints them: each fault line said in words, with when and whom it hit
// (faultSentence), not as the history's event ("#5 0.007s p-1 start
// pause"); the lines under a finding are indented by two spaces.
func ExplanationLines(lines []string, events []history.Event) []string {
	var out []string
	for _, b := range explanationBlocks(lines, history.FaultWindows(events)) {
		out = append(out, b.Text)
		for _, l := range b.Lines {
			out = append(out, "  "+l)
		}
	}
	return out
}

// explanationBlocks groups a counterexample's explanation lines: each line
// that is not indented starts a block, and the indented lines after it
// belong to it. A line about a fault is said in words (faultSentence), found
// by its event's index among the history's fault windows; the start and the
// stop of one fault become one line. A fault line whose window is not in the
// history keeps its text, without the nemesis's process number.
func explanationBlocks(lines []string, windows []history.FaultWindow) []cxBlock {
	byIndex := map[int]int{} // event index -> window
	for i, w := range windows {
		byIndex[w.Start.Index] = i
		if w.Stop != nil {
			byIndex[w.Stop.Index] = i
		}
	}
	var out []cxBlock
	said := map[int]bool{} // windows said in the current block
	for _, l := range lines {
		if l == strings.TrimLeftFunc(l, unicode.IsSpace) {
			out = append(out, cxBlock{Text: l})
			clear(said)
			continue
		}
		if len(out) == 0 {
			out = append(out, cxBlock{})
		}
		b := &out[len(out)-1]
		if m := faultLine.FindStringSubmatch(l); m != nil {
			idx, _ := strconv.Atoi(m[1])
			w, ok := byIndex[idx]
			switch {
			case ok && said[w]:
				continue
			case ok:
				said[w] = true
				l = faultSentence(windows[w])
			default:
				l = strings.Replace(l, fmt.Sprintf(" p%d ", history.NemesisProcess), " ", 1)
			}
		}
		if l = strings.TrimSpace(l); b.Text == "" {
			b.Text = l
		} else {
			b.Lines = append(b.Lines, l)
		}
	}
	return out
}

// faultSentence says what a fault was and when, in the words of the report:
// "During the pause of c4 from 24.397s to 35.444s (11.047s)." Its detail is
// added when it says more than the kind and length ("isolate [c1]").
func faultSentence(w history.FaultWindow) string {
	s := "During the " + w.Start.F
	if len(w.Start.Targets) > 0 {
		s += " of " + strings.Join(w.Start.Targets, ", ")
	}
	start := history.FormatTime(w.Start.Time)
	switch {
	case w.Stop == nil:
		s += " from " + start + ", still on at the end"
	case w.Stop.Time == w.Start.Time:
		s += " at " + start
	default:
		s += fmt.Sprintf(" from %s to %s (%s)", start, history.FormatTime(w.Stop.Time), history.FormatDuration(w.Stop.Time-w.Start.Time))
	}
	if d := w.Start.Detail; d != "" && d != w.Start.F && !strings.HasPrefix(d, w.Start.F+" for ") {
		s += ": " + d
	}
	return s + "."
}

// foldBlocks splits blocks into those shown, at least one and as many as fit
// in shown lines, and those folded behind a click; folded counts the lines
// of the folded ones. A single line is never folded: the click would save
// nothing.
func foldBlocks(blocks []cxBlock, shown int) (open, closed []cxBlock, folded int) {
	lines := 0
	for i, b := range blocks {
		if i > 0 && lines+b.size() > shown {
			for _, c := range blocks[i:] {
				folded += c.size()
			}
			if folded == 1 {
				return blocks, nil, 0
			}
			return blocks[:i], blocks[i:], folded
		}
		lines += b.size()
	}
	return blocks, nil, 0
}

// faultName names a fault of the schedule for a reader: its number, from 1
// in the schedule's order, its kind and targets ("fault 5 (pause c2)"), or
// its kind alone when the schedule does not say more.
func faultName(i int, kind string, row *scheduleRow) string {
	what := kind
	if row != nil {
		if t := strings.NewReplacer("[", "", "]", "").Replace(row.Targets); t != "" {
			what += " " + t
		}
	}
	return fmt.Sprintf("fault %d (%s)", i+1, what)
}

// upperFirst capitalises a sentence.
func upperFirst(s string) string {
	if c, size := utf8.DecodeRuneInString(s); unicode.IsLower(c) {
		return string(unicode.ToUpper(c)) + s[size:]
	}
	return s
}
