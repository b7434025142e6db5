package inventory

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stock.txt")
	if err := os.WriteFile(path, []byte("# shelf A\nbolts 120\n\nnuts 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0] != (Item{"bolts", 120}) || items[1] != (Item{"nuts", 3}) {
		t.Errorf("Load = %v", items)
	}
}

func TestLowStock(t *testing.T) {
	items := []Item{{"bolts", 120}, {"nuts", 3}, {"washers", 10}}
	low := LowStock(items, 10)
	if len(low) != 1 || low[0].Name != "nuts" {
		t.Errorf("LowStock = %v, want nuts only", low)
	}
}
