package bankingsim

import "testing"

func TestCheckIBAN(t *testing.T) {
	for _, tc := range []struct {
		iban, why string
	}{
		{"DE89370400440532013000", ""},
		{"FR1420041010050500013M02606", ""},
		{"NL91ABNA0417164300", ""},
		{"GB29NWBK60161331926819", ""},
		{"NO9386011117947", ""},
		{"LV80BANK0000435195001", ""},
		{"TR330006100519786457841326", ""}, // valid, outside SEPA
		{"DE89370400440532013001", "iban checksum is wrong"},
		{"DE8937040044053201300", "iban of DE must have 22 characters"},
		{"ZZ89370400440532013000", "iban country ZZ is unknown"},
		{"D189370400440532013000", "iban must start with a two-letter country code"},
		{"DE8937040044053201300!", "iban holds letters and digits only"},
	} {
		if got := checkIBAN(normIBAN(tc.iban)); got != tc.why {
			t.Errorf("checkIBAN(%s) = %q, want %q", tc.iban, got, tc.why)
		}
	}
	for _, c := range []string{"LV", "LT", "EE", "GB"} {
		iban := makeIBAN(c, map[string]string{"LV": "SAND0000000000001", "LT": "7000000000000002",
			"EE": "7700000000000011", "GB": "SAND00000000000001"}[c])
		if why := checkIBAN(iban); why != "" {
			t.Errorf("makeIBAN(%s) = %s: %s", c, iban, why)
		}
	}
	if sepaCountries["TR"] || !sepaCountries["NO"] || !sepaCountries["CH"] {
		t.Error("SEPA membership table is wrong")
	}
}
