package strategy

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"fedbayes.dev/fedbayes/aggregate"
)

// Factory builds a strategy from a spec's settings, or refuses them (a *FieldError names the field).
type Factory func(Settings) (Strategy, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
	builtin    = map[string]bool{}
)

// key is the registry key of a name: names are case-insensitive.
func key(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Is reports whether rule names the strategy name, as New reads names (case-insensitive, surrounding
// spaces ignored).
func Is(rule, name string) bool { return key(rule) == key(name) }

// Register adds a strategy under name (case-insensitive; letters, digits, '-', '_' and '.'). It
// replaces an earlier registration of the same name, so that a notebook cell can be run again, but it
// refuses to replace a built-in strategy.
func Register(name string, f Factory) error {
	k := key(name)
	if k == "" || f == nil {
		return fmt.Errorf("strategy: Register needs a name and a factory")
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("strategy: name %q: use letters, digits, '-', '_' and '.'", name)
		}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if builtin[k] {
		return fmt.Errorf("strategy: %q is a built-in strategy; choose another name", name)
	}
	registry[k] = f
	return nil
}

// registerBuiltin registers one of the package's own strategies at init.
func registerBuiltin(name string, f Factory) {
	registry[key(name)], builtin[key(name)] = f, true
}

// Known reports whether name is registered (an aggregate rule's alias counts as its rule).
func Known(name string) bool {
	if _, err := aggregate.ParseRule(name); err == nil {
		return true
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	_, ok := registry[key(name)]
	return ok
}

// Names lists the registered strategies, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for k := range registry {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// New builds the strategy registered as name with the given settings.
func New(name string, s Settings) (Strategy, error) {
	if rule, err := aggregate.ParseRule(name); err == nil {
		name = string(rule) // the aliases NWA, WS, WC and LLP
	}
	registryMu.RLock()
	f, ok := registry[key(name)]
	registryMu.RUnlock()
	if !ok {
		return nil, &FieldError{Field: "aggregation.rule", Problem: fmt.Sprintf("%q is not a registered strategy; known: %s", name, strings.Join(Names(), ", "))}
	}
	st, err := f(s)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("strategy: the factory of %q returned no strategy", name)
	}
	return st, nil
}
