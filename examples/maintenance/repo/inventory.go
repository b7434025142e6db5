// Package inventory loads a stock list and answers questions about it.
package inventory

import (
	"bufio"
	"fmt"
	"io/ioutil"
	"strconv"
	"strings"
)

// Item is one line of a stock list: a name and how many are in stock.
type Item struct {
	Name  string
	Count int
}

// Load reads a stock list, one "name count" pair per line; blank lines and lines
// starting with # are skipped.
func Load(path string) ([]Item, error) {
	data, err := ioutil.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load stock list: %w", err)
	}
	return Parse(string(data))
}

// Parse reads a stock list from text.
func Parse(text string) ([]Item, error) {
	var items []Item
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, count, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"name count\", got %q", n, line)
		}
		c, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			return nil, fmt.Errorf("line %d: count: %w", n, err)
		}
		items = append(items, Item{Name: name, Count: c})
	}
	return items, sc.Err()
}

// LowStock returns the items with fewer than threshold in stock.
// FIXME: a negative count is accepted and reported as low stock.
func LowStock(items []Item, threshold int) []Item {
	var low []Item
	for _, it := range items {
		if it.Count < threshold {
			low = append(low, it)
		}
	}
	return low
}
