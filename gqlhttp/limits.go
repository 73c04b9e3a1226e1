package gqlhttp

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/fingraph/fingraph/gqlerr"
)

var errInternal = &gqlerr.Error{Code: gqlerr.Internal, Message: gqlerr.InternalMessage}

// DocumentLimit bounds a document before gqlgen validates it.
//
// Validation is the costly step an anonymous client can trigger: gqlparser's
// overlapping-fields rule is quadratic in the fields of a selection set, and
// every walk that follows fragment spreads naively (validation, complexity)
// is exponential in a chain of fragments that each spread the previous one
// twice. So DocumentLimit runs as an OperationParameterMutator, before
// parsing and validation: it parses the document itself (linear, under the
// token limit) and measures it with each fragment walked once (memoised), then
// refuses it when the expanded document (every spread replaced by its
// fragment) is too large, too deep, has too many aliases or root fields. Only
// a document that passes reaches the validator, whose cost is then bounded by
// MaxFields.
//
// Fields inside __schema and __type count against MaxIntrospectionDepth
// instead of MaxDepth, so the standard introspection query (graphql-js
// getIntrospectionQuery, 13 levels of ofType) works while application
// queries stay shallow.
//
// Documents that passed are remembered (an LRU keyed by the document text),
// so a repeated query costs one map look-up here, as it does in gqlgen's
// query cache.
type DocumentLimit struct {
	MaxTokens             int
	MaxFields             int
	MaxDepth              int
	MaxIntrospectionDepth int
	MaxAliases            int
	MaxRootFields         int
	// MaxSameName bounds how often one response name occurs in a selection
	// set once its inline fragments and fragment spreads are merged: the
	// overlapping-fields rule compares those fields pairwise, so its cost
	// grows with the square of this number.
	MaxSameName int
	// MaxDirectives bounds the directives of an operation once its
	// fragments are expanded (@include, @skip, ... on every selection).
	MaxDirectives int
	// Introspection allows __schema and __type; when false a document that
	// asks for them is refused here, with a client code.
	Introspection bool

	passed *lru.LRU[struct{}]
}

var (
	_ graphql.HandlerExtension          = (*DocumentLimit)(nil)
	_ graphql.OperationParameterMutator = (*DocumentLimit)(nil)
)

// ExtensionName implements graphql.HandlerExtension.
func (*DocumentLimit) ExtensionName() string { return "DocumentLimit" }

// Validate implements graphql.HandlerExtension.
func (d *DocumentLimit) Validate(graphql.ExecutableSchema) error {
	if d.MaxTokens <= 0 || d.MaxFields <= 0 || d.MaxDepth <= 0 || d.MaxIntrospectionDepth <= 0 ||
		d.MaxAliases < 0 || d.MaxRootFields <= 0 || d.MaxSameName <= 0 || d.MaxDirectives < 0 {
		return errors.New("DocumentLimit: limits must be positive")
	}
	if d.passed == nil {
		d.passed = lru.New[struct{}](1000)
	}
	return nil
}

// MutateOperationParameters implements graphql.OperationParameterMutator. It
// changes nothing; it refuses.
func (d *DocumentLimit) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil // gqlgen answers "no operation provided"
	}
	if _, ok := d.passed.Get(ctx, p.Query); ok {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, d.MaxTokens)
	if err != nil {
		// A syntax error, or the token limit. gqlgen would parse it again
		// and fail the same way; answer now with the parser's message
		// (positions and the offending token only, never the document).
		var ge *gqlerror.Error
		if errors.As(err, &ge) {
			return tooLarge(ge.Message, "PARSE_FAILED")
		}
		return tooLarge("the document could not be parsed", "PARSE_FAILED")
	}
	if msg := d.Measure(doc); msg != "" {
		reason := "QUERY_TOO_LARGE"
		if msg == errIntrospectionOff {
			reason = "INTROSPECTION_DISABLED"
		}
		return tooLarge(msg, reason)
	}
	d.passed.Add(ctx, p.Query, struct{}{})
	return nil
}

func tooLarge(msg, reason string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(gqlerr.BadUserInput), "reason": reason}}
}

// Measure reports why doc exceeds the limits, or "" when it does not. Its
// cost is linear in the document: each fragment is measured once.
func (d *DocumentLimit) Measure(doc *ast.QueryDocument) string {
	m := measurer{doc: doc, memo: make(map[string]*shape, len(doc.Fragments)), cap: d.MaxFields + 1, sameName: d.MaxSameName}
	for _, op := range doc.Operations {
		s, err := m.set(op.SelectionSet, false)
		if err != "" {
			return err
		}
		switch {
		case s.introspects && !d.Introspection:
			return errIntrospectionOff
		case s.fields > d.MaxFields:
			return fmt.Sprintf("operation selects more than %d fields once its fragments are expanded", d.MaxFields)
		case s.roots > d.MaxRootFields:
			return fmt.Sprintf("operation has %d root fields; the limit is %d", s.roots, d.MaxRootFields)
		case s.depth > d.MaxDepth:
			return fmt.Sprintf("operation nests %d levels deep; the limit is %d", s.depth, d.MaxDepth)
		case s.introDepth > d.MaxIntrospectionDepth:
			return fmt.Sprintf("introspection nests %d levels deep; the limit is %d", s.introDepth, d.MaxIntrospectionDepth)
		case s.directives > d.MaxDirectives:
			return fmt.Sprintf("operation uses %d directives; the limit is %d", s.directives, d.MaxDirectives)
		case s.aliases > d.MaxAliases:
			return fmt.Sprintf("operation uses %d aliases; the limit is %d", s.aliases, d.MaxAliases)
		}
	}
	return ""
}

const errIntrospectionOff = "introspection is disabled on this gateway"

// shape is what a selection set costs once expanded. Counts saturate at the
// measurer's cap, so a fragment chain that doubles at every step cannot
// overflow them.
type shape struct {
	fields  int // fields, every spread expanded
	aliases int // aliased fields, every spread expanded
	// directives on fields, inline fragments and spreads, every spread
	// expanded
	directives int
	roots      int // fields directly in the set (through fragments)
	// depth is the nesting below and including this set, introspection
	// subtrees excluded; introDepth is the nesting of __schema and __type
	// subtrees, counted from the set.
	depth      int
	introDepth int
	// introspects tells whether the set asks for __schema or __type.
	introspects bool
	// names counts the response names of the set's fields merged through
	// inline fragments and spreads (what the overlapping-fields rule
	// compares); nil when the set has none.
	names map[string]int
}

type measurer struct {
	doc      *ast.QueryDocument
	memo     map[string]*shape // by fragment name; nil value = in progress
	cap      int
	sameName int
}

func (m *measurer) add(a, b int) int {
	if a+b > m.cap || a+b < 0 {
		return m.cap
	}
	return a + b
}

// set measures a selection set. intro tells whether it lies inside an
// introspection field, where depth counts toward introDepth.
func (m *measurer) set(sel ast.SelectionSet, intro bool) (shape, string) {
	var out shape
	merge := func(s shape) {
		out.fields = m.add(out.fields, s.fields)
		out.aliases = m.add(out.aliases, s.aliases)
		out.directives = m.add(out.directives, s.directives)
		out.roots = m.add(out.roots, s.roots)
		out.depth = max(out.depth, s.depth)
		out.introDepth = max(out.introDepth, s.introDepth)
		out.introspects = out.introspects || s.introspects
	}
	addName := func(n string, c int) string {
		if out.names == nil {
			out.names = map[string]int{}
		}
		out.names[n] += c
		if out.names[n] > m.sameName {
			return fmt.Sprintf("the field %q is selected more than %d times in one selection set", n, m.sameName)
		}
		return ""
	}
	mergeNames := func(names map[string]int) string {
		for n, c := range names {
			if err := addName(n, c); err != "" {
				return err
			}
		}
		return ""
	}
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			inIntro := intro || s.Name == "__schema" || s.Name == "__type"
			child, err := m.set(s.SelectionSet, inIntro)
			if err != "" {
				return out, err
			}
			f := shape{fields: m.add(child.fields, 1), aliases: child.aliases, roots: 1, introspects: inIntro,
				directives: m.add(child.directives, len(s.Directives))}
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			if err := addName(name, 1); err != "" {
				return out, err
			}
			if s.Alias != "" && s.Alias != s.Name {
				f.aliases = m.add(f.aliases, 1)
			}
			if inIntro {
				f.introDepth = max(child.depth, child.introDepth) + 1
			} else {
				f.depth = child.depth + 1
				f.introDepth = child.introDepth
			}
			merge(f)
		case *ast.InlineFragment:
			child, err := m.set(s.SelectionSet, intro)
			if err != "" {
				return out, err
			}
			if err := mergeNames(child.names); err != "" {
				return out, err
			}
			child.directives = m.add(child.directives, len(s.Directives))
			merge(child)
		case *ast.FragmentSpread:
			child, err := m.fragment(s.Name, intro)
			if err != "" {
				return out, err
			}
			if err := mergeNames(child.names); err != "" {
				return out, err
			}
			child.directives = m.add(child.directives, len(s.Directives))
			merge(child)
		}
		if out.fields >= m.cap {
			return out, "" // already over the limit; stop walking
		}
	}
	return out, ""
}

// fragment measures a named fragment once. Inside an introspection field a
// fragment's depth counts as introspection depth; the memo keeps the two
// readings apart.
func (m *measurer) fragment(name string, intro bool) (shape, string) {
	key := name
	if intro {
		key = "\x00" + name
	}
	if s, ok := m.memo[key]; ok {
		if s == nil {
			return shape{}, fmt.Sprintf("fragment %q spreads itself", name)
		}
		return *s, ""
	}
	def := m.doc.Fragments.ForName(name)
	if def == nil {
		return shape{}, "" // the validator reports unknown fragments
	}
	m.memo[key] = nil
	s, err := m.set(def.SelectionSet, intro)
	if err != "" {
		return s, err
	}
	m.memo[key] = &s
	return s, ""
}
