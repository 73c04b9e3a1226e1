package schema

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// specDir is where the upstream specifications are: shared/ beside the
// repository (the CI run lays it at ../shared of its clone), relative to
// this package.
const specDir = "../../shared/spec"

// coverageDoc holds the coverage table the test keeps honest.
const coverageDoc = "../docs/spec-coverage.md"

// specField is one response field of an object of a spec.
type specField struct {
	spec, object, field string
}

// specFields reads the response objects of every spec in specDir: the
// "## Resources and their fields" part, one object per "###" section.
// Tables whose first column is Field give a field (or several, comma
// separated) per row; a section without one lists its fields as a
// paragraph, "name (type), name (type), ..."; a table of Shape or
// Resource rows gives one object per row, its fields listed as in a
// paragraph. Request objects (a title naming them creatable, a table with
// a Required column) are not responses and are left out.
func specFields(t *testing.T) []specField {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(specDir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec in %s (the CI run lays shared/ beside the repository): %v", specDir, err)
	}
	sort.Strings(files)
	var out []specField
	for _, f := range files {
		out = append(out, parseSpec(t, f)...)
	}
	return out
}

func parseSpec(t *testing.T, path string) []specField {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Base(path)
	var out []specField
	add := func(object string, names []string) {
		for _, n := range names {
			out = append(out, specField{spec: spec, object: object, field: n})
		}
	}
	inResources := false
	section := ""
	var para []string // the section's lines when it has no Field table
	hasTable := false
	tableKind := "" // "field", "rows" or "skip" for the table being read
	flush := func() {
		if section != "" && !hasTable && !strings.Contains(strings.ToLower(section), "creatable") {
			for _, line := range para {
				if names := paragraphFields(line); len(names) > 0 {
					add(section, names)
					break
				}
			}
		}
		if section != "" && !strings.Contains(strings.ToLower(section), "creatable") {
			for _, line := range para {
				for _, sentence := range strings.Split(line, ". ") {
					if prefix, names, ok := carriedFields(sentence); ok {
						for _, n := range names {
							add(section, []string{prefix + n})
						}
					}
				}
				if m := namedObject.FindStringSubmatch(line); m != nil {
					if names := listedFields(m[2]); len(names) > 0 {
						add(m[1], names)
					}
				}
			}
		}
		para, hasTable, tableKind = nil, false, ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			flush()
			section = ""
			inResources = line == "## Resources and their fields"
			continue
		case !inResources:
			continue
		case strings.HasPrefix(line, "### "):
			flush()
			section = strings.TrimPrefix(line, "### ")
			continue
		case section == "":
			continue
		}
		if !strings.HasPrefix(line, "|") {
			tableKind = ""
			if line != "" {
				para = append(para, line)
			}
			continue
		}
		cells := tableCells(line)
		if tableKind == "" { // a header
			hasTable = true
			switch {
			case strings.Contains(strings.ToLower(section), "creatable") || containsCell(cells, "Required"):
				tableKind = "skip"
			case cells[0] == "Field":
				tableKind = "field"
			case (cells[0] == "Shape" || cells[0] == "Resource") && len(cells) == 2:
				tableKind = "rows"
			default:
				tableKind = "skip"
			}
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		switch tableKind {
		case "field":
			var names []string
			for _, n := range strings.Split(cells[0], ",") {
				n = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n), "(staff)"))
				if n != "" {
					names = append(names, n)
				}
			}
			add(section, names)
			if len(names) == 1 && len(cells) >= 3 && strings.Contains(cells[1], "object") {
				for _, inner := range nestedFields(cells[2]) {
					add(section, []string{names[0] + "." + inner})
				}
			}
		case "rows":
			add(cells[0], paragraphFields(cells[1]))
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func tableCells(line string) []string {
	line = strings.Trim(line, "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func containsCell(cells []string, s string) bool {
	for _, c := range cells {
		if c == s {
			return true
		}
	}
	return false
}

var leadingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

// paragraphFields reads the fields of a sentence listing them: the first
// sentence, after its colon when it has one ("On the wire ...: id, ..."),
// up to a semicolon, split at commas and "with" outside parentheses; each
// item's leading name is a field. An item that names its field in words
// ("the creation time (...)") is that phrase. A sentence saying its fields
// are not shown lists none.
func paragraphFields(text string) []string {
	sentence := cutDepth0(text, ". ")
	sentence = strings.TrimSuffix(sentence, ".")
	if strings.Contains(sentence, "not shown") {
		return nil
	}
	if i := indexDepth0(sentence, ": "); i >= 0 {
		sentence = sentence[i+2:]
	}
	sentence = cutDepth0(sentence, ";")
	var names []string
	for _, item := range splitDepth0(sentence) {
		item = strings.TrimSpace(item)
		item = strings.TrimPrefix(item, "and ")
		if rest, ok := strings.CutPrefix(item, "the "); ok {
			if i := strings.Index(rest, " ("); i >= 0 {
				rest = rest[:i]
			}
			names = append(names, strings.TrimSpace(rest))
			continue
		}
		if n := leadingName.FindString(item); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// nestedFields reads the inner fields that the notes of an object field
// list ("year (string), month (string)", "bank data: name, street, ..."):
// up to a semicolon, after a colon, at least two items, each a name with
// at most a parenthesis after it, the last one perhaps followed by words.
// Notes that describe the object in prose ("partial objects", "wallet
// holding reserved funds") list none.
func nestedFields(notes string) []string {
	s := cutDepth0(notes, ";")
	if i := indexDepth0(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	items := splitDepth0(s)
	if len(items) < 2 {
		return nil
	}
	names := make([]string, 0, len(items))
	for i, it := range items {
		it = strings.TrimPrefix(strings.TrimSpace(it), "and ")
		n := leadingName.FindString(it)
		rest := strings.TrimSpace(it[len(n):])
		if n == "" || (rest != "" && !strings.HasPrefix(rest, "(") && i != len(items)-1) {
			return nil
		}
		names = append(names, n)
	}
	return names
}

// carried matches a sentence that adds fields to an object: "The creation
// response additionally carries a, b." (fields of the section's object) or
// "The limitSet also carries a, b in read responses." (inner fields of the
// field limitSet).
var carried = regexp.MustCompile(`^The (\w+)( response)? (?:additionally|also) carries (.+?)\.?$`)

func carriedFields(sentence string) (prefix string, names []string, ok bool) {
	m := carried.FindStringSubmatch(strings.TrimSpace(sentence))
	if m == nil {
		return "", nil, false
	}
	if m[2] == "" {
		prefix = m[1] + "."
	}
	for _, it := range splitDepth0(strings.ReplaceAll(m[3], " and ", ", ")) {
		if n := leadingName.FindString(strings.TrimSpace(it)); n != "" {
			names = append(names, n)
		}
	}
	return prefix, names, len(names) > 0
}

// namedObject matches a line that lists the fields of a response object of
// its own: "Card credentials: pan (full number string) and cvc2 (string)."
// A short name, then its fields (listedFields decides whether they are).
var namedObject = regexp.MustCompile(`^([A-Z][a-z]+(?: [a-z]+){0,2}): (.+?)\.?$`)

// listedFields reads "a (type), b (type) and c (type)": each item a name
// with a lower-case letter and at most a parenthesis after it. Anything
// else (a list of country codes, of error codes, prose) lists none.
func listedFields(list string) []string {
	var names []string
	for _, it := range splitDepth0(strings.ReplaceAll(list, " and ", ", ")) {
		it = strings.TrimSpace(it)
		n := leadingName.FindString(it)
		rest := strings.TrimSpace(it[len(n):])
		if n == "" || strings.ToUpper(n) == n || (rest != "" && !strings.HasPrefix(rest, "(")) {
			return nil
		}
		names = append(names, n)
	}
	return names
}

// indexDepth0 is strings.Index outside parentheses.
func indexDepth0(s, sep string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			return i
		}
	}
	return -1
}

func cutDepth0(s, sep string) string {
	if i := indexDepth0(s, sep); i >= 0 {
		return s[:i]
	}
	return s
}

// splitDepth0 splits at ", " and " with " outside parentheses.
func splitDepth0(s string) []string {
	var out []string
	for {
		i, j := indexDepth0(s, ", "), indexDepth0(s, " with ")
		if j >= 0 && (i < 0 || j < i) {
			out = append(out, s[:j])
			s = s[j+len(" with "):]
			continue
		}
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+2:]
	}
}

// coverageRow is one row of the coverage table of docs/spec-coverage.md.
type coverageRow struct {
	line   int
	graph  []string
	reason string
}

// coverageSummary is the sentence of docs/spec-coverage.md that gives the counts.
var coverageSummary = regexp.MustCompile(`\*\*(\d+) of (\d+)\*\* spec response fields are in the graph; \*\*(\d+)\*\* are left out`)

// coverageTable reads the table under "## What the graph shows of the
// specs": | spec object | spec field | in the graph | left out because |,
// and the counts its summary sentence gives (shown, all, left out).
func coverageTable(t *testing.T) (map[[2]string]coverageRow, [3]int) {
	t.Helper()
	b, err := os.ReadFile(coverageDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[[2]string]coverageRow{}
	var counts [3]int
	in := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## What the graph shows of the specs")
			continue
		}
		if m := coverageSummary.FindStringSubmatch(line); in && m != nil {
			for j := range counts {
				counts[j], _ = strconv.Atoi(m[j+1])
			}
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := tableCells(line)
		if len(cells) != 4 {
			t.Errorf("%s:%d: a coverage row has 4 cells, this one %d", coverageDoc, i+1, len(cells))
			continue
		}
		if cells[0] == "spec object" {
			continue
		}
		key := [2]string{cells[0], strings.Trim(cells[1], "`")}
		if _, dup := rows[key]; dup {
			t.Errorf("%s:%d: %s.%s is in the table twice", coverageDoc, i+1, key[0], key[1])
		}
		row := coverageRow{line: i + 1, reason: cells[3]}
		for _, g := range strings.Split(cells[2], ",") {
			if g = strings.Trim(strings.TrimSpace(g), "`"); g != "" {
				row.graph = append(row.graph, g)
			}
		}
		rows[key] = row
	}
	return rows, counts
}

// resolvePath reports whether Type.field(.field...) exists in the schema,
// following each field's type.
func resolvePath(s *ast.Schema, path string) error {
	parts := strings.Split(path, ".")
	if len(parts) < 2 {
		return fmt.Errorf("%q is not Type.field", path)
	}
	def := s.Types[parts[0]]
	if def == nil {
		return fmt.Errorf("type %s is not in the schema", parts[0])
	}
	for i, name := range parts[1:] {
		f := def.Fields.ForName(name)
		if f == nil {
			return fmt.Errorf("%s has no field %s", def.Name, name)
		}
		if i == len(parts)-2 {
			return nil
		}
		def = s.Types[f.Type.Name()]
	}
	return nil
}

// TestEverySpecFieldIsInTheGraphOrExcluded keeps the coverage table of
// docs/spec-coverage.md honest: every response field of every object the specs
// list is in the table, either with the schema fields that show it (each
// must exist) or with the reason it is left out; and no row names a field
// the specs do not list.
func TestEverySpecFieldIsInTheGraphOrExcluded(t *testing.T) {
	s := loadSchema(t)
	fields := specFields(t)
	rows, counts := coverageTable(t)
	if len(fields) < 100 {
		t.Fatalf("read only %d fields from the specs: the parser no longer understands them", len(fields))
	}
	seen := map[[2]string]string{}
	shown, left := 0, 0
	for _, f := range fields {
		key := [2]string{f.object, f.field}
		if other, dup := seen[key]; dup {
			if other != f.spec {
				t.Errorf("object %q is in two specs (%s, %s): the table cannot tell them apart", f.object, other, f.spec)
			}
			continue
		}
		seen[key] = f.spec
		row, ok := rows[key]
		if !ok {
			t.Errorf("%s: %s.%s is neither in the graph nor excluded: add a row | %s | %s | Type.field | | to %s", f.spec, f.object, f.field, f.object, f.field, coverageDoc)
			continue
		}
		switch {
		case len(row.graph) > 0:
			shown++
			for _, g := range row.graph {
				if err := resolvePath(s, g); err != nil {
					t.Errorf("%s:%d: %s.%s: %v", coverageDoc, row.line, f.object, f.field, err)
				}
			}
		case strings.TrimSpace(row.reason) != "":
			left++
		default:
			t.Errorf("%s:%d: %s.%s names neither a schema field nor a reason", coverageDoc, row.line, f.object, f.field)
		}
	}
	for key, row := range rows {
		if _, ok := seen[key]; !ok {
			t.Errorf("%s:%d: %s.%s is not a response field of the specs", coverageDoc, row.line, key[0], key[1])
		}
	}
	if want := [3]int{shown, len(seen), left}; counts != want {
		t.Errorf("%s says **%d of %d** in the graph and **%d** left out; the table has %d of %d and %d: correct the sentence",
			coverageDoc, counts[0], counts[1], counts[2], want[0], want[1], want[2])
	}
	t.Logf("%d spec response fields: %d in the graph, %d left out with a reason", len(seen), shown, left)
}

// TestSpecFieldListsAreRead pins how the coverage test reads the specs'
// field lists, on sentences of the forms they use.
func TestSpecFieldListsAreRead(t *testing.T) {
	for _, tc := range []struct {
		read func(string) []string
		in   string
		want []string
	}{
		{paragraphFields, "id (string), bank_code (BIC string), comment (string or null; credit-card type only), expiry (string, empty default). Only staff.", []string{"id", "bank_code", "comment", "expiry"}},
		{paragraphFields, "On the wire the examples use camelCase: id, paymentMethod (for example bank-transfer), and limitSet with minimumAmount, maximumAmount (numbers). More.", []string{"id", "paymentMethod", "limitSet", "minimumAmount", "maximumAmount"}},
		{paragraphFields, "id, name, and the creation time (written createdAt here); no event payload data", []string{"id", "name", "creation time"}},
		{paragraphFields, "Fields of a pending action: not shown.", nil},
		{nestedFields, "bank data: name, street, postCode, city, country", []string{"name", "street", "postCode", "city", "country"}},
		{nestedFields, "id, first_name, last_name in the update response", []string{"id", "first_name", "last_name"}},
		{nestedFields, "is_corporation_under_review (boolean); corporation_profile and corporate_users_profile", nil},
		{nestedFields, "partial objects", nil},
		{nestedFields, "entity debited: partial Corporation Wallet for transfer-outgoing, partial Payment Account for transfer-incoming", nil},
		{listedFields, "pan (full number string) and cvc2 (string)", []string{"pan", "cvc2"}},
		{listedFields, "AT, BE, BG", nil},
		{listedFields, "101 PICK_UP; 1300 INVALID_DATA_FORMAT", nil},
	} {
		if got := tc.read(tc.in); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q: read %q, want %q", tc.in, got, tc.want)
		}
	}
	prefix, names, ok := carriedFields("The limitSet also carries _id, createdAt, updatedAt in read responses")
	if !ok || prefix != "limitSet." || strings.Join(names, ",") != "_id,createdAt,updatedAt" {
		t.Errorf("limitSet: %q %q %v", prefix, names, ok)
	}
	prefix, names, ok = carriedFields("The creation response additionally carries identity_id, fingerprint_id.")
	if !ok || prefix != "" || strings.Join(names, ",") != "identity_id,fingerprint_id" {
		t.Errorf("creation response: %q %q %v", prefix, names, ok)
	}
}
