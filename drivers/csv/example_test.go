package csv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs/drivers/csv"
)

// The model explores a semicolon-separated file, summarises a column and asks for
// a column that does not exist.
func Example() {
	dir, err := os.MkdirTemp("", "mcs-csv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sales := "region;month;revenue\nNorth;Jan;1200,50\nSouth;Jan;980\nNorth;Feb;n/a\nSouth;Feb;1410\n"
	if err := os.MkdirAll(filepath.Join(dir, "reports"), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reports", "sales.csv"), []byte(sales), 0o644); err != nil {
		log.Fatal(err)
	}

	d, err := csv.New(csv.Config{Root: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()

	for _, reply := range []string{
		`{"tool":"list_csv_files","arguments":{}}`,
		`{"tool":"filter_csv_rows","arguments":{"path":"reports/sales.csv","column":"region","value":"North"}}`,
		`{"tool":"summarize_numeric_column","arguments":{"path":"reports/sales.csv","column":"revenue"}}`,
		`{"tool":"summarize_numeric_column","arguments":{"path":"reports/sales.csv","column":"profit"}}`,
	} {
		resp := d.ProcessLLMResponse(ctx, reply)
		for _, c := range resp.Calls {
			if c.Err != nil {
				fmt.Println(c.Name, "failed:", c.Err)
				continue
			}
			b, _ := json.Marshal(c.Result)
			fmt.Println(c.Name, string(b))
		}
	}
	// Output:
	// list_csv_files {"count":1,"files":[{"path":"reports/sales.csv","size":82}],"truncated":false}
	// filter_csv_rows {"column":"region","columns":["region","month","revenue"],"operator":"eq","path":"reports/sales.csv","returned":2,"rows":[["North","Jan","1200,50"],["North","Feb","n/a"]],"rows_scanned":4,"total_matches":2,"truncated":false,"value":"North"}
	// summarize_numeric_column {"column":"revenue","count":3,"empty":0,"max":1410,"mean":1196.8333333333333,"min":980,"non_numeric":1,"non_numeric_examples":["n/a"],"path":"reports/sales.csv","rows":4,"sum":3590.5}
	// summarize_numeric_column failed: summarize_numeric_column: unknown column "profit"; the columns are: "region", "month", "revenue"
}

// The tool driver can be used without the LLM-facing half, for example inside an
// orchestrator.
func ExampleNewToolDriver() {
	dir, err := os.MkdirTemp("", "mcs-csv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "people.tsv"), []byte("\xef\xbb\xbfname\tage\nAnn\t31\nBob\t25\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	td, err := csv.NewToolDriver(csv.Config{Root: dir, MaxRows: 100})
	if err != nil {
		log.Fatal(err)
	}
	defer td.Close()

	res, err := td.ExecuteTool(context.Background(), "describe_csv", map[string]any{"path": "people.tsv"})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	// Output:
	// {"columns":[{"empty":0,"name":"name","type":"string"},{"empty":0,"name":"age","type":"integer"}],"delimiter":"\t","encoding":"utf-8 with BOM","path":"people.tsv","row_count":2,"sample":[["Ann","31"],["Bob","25"]]}
}
