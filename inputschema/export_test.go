package inputschema

import (
	"context"
	"encoding/json"
)

// StepsOf checks input and reports how many steps the check took.
func StepsOf(s *Schema, input json.RawMessage) (int, error) {
	c, err := s.take()
	if err != nil {
		return 0, err
	}
	defer s.put(c)
	_, err = c.check(context.Background(), input, budgetFor(input))
	return c.meter.used, err
}

// Spares is how many compiled copies s keeps.
func Spares(s *Schema) int { return len(s.spare) }

// BudgetFor is the budget of a check of input.
func BudgetFor(input []byte) int { return budgetFor(input) }

// Walks is how many checks walked s's schema.
func Walks(s *Schema) int64 { return s.walks.Load() }
