package bankingsim

import (
	"fmt"
	"math/big"
	"strings"
)

// ibanLengths is the IBAN length of each country that has IBANs (ISO 13616
// registry, the countries a demo meets); sepaCountries marks those in the
// SEPA scheme area. The sandbox's own table: the gateway has a separate
// format check and shares no code with this one.
var ibanLengths = map[string]int{
	// SEPA
	"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
	"ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26,
	"IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28,
	"PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "VA": 22,
	// Outside SEPA
	"AE": 23, "AL": 28, "AZ": 28, "BA": 20, "BH": 22, "BR": 29, "BY": 28, "CR": 22, "DO": 28, "EG": 29,
	"FO": 18, "GE": 22, "GL": 18, "GT": 28, "IL": 23, "IQ": 23, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LC": 32, "LY": 25, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MU": 30, "PK": 24, "PS": 29, "QA": 29,
	"RS": 22, "SA": 24, "SC": 31, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}

var sepaCountries = map[string]bool{
	"AD": true, "AT": true, "BE": true, "BG": true, "CH": true, "CY": true, "CZ": true, "DE": true,
	"DK": true, "EE": true, "ES": true, "FI": true, "FR": true, "GB": true, "GI": true, "GR": true,
	"HR": true, "HU": true, "IE": true, "IS": true, "IT": true, "LI": true, "LT": true, "LU": true,
	"LV": true, "MC": true, "MT": true, "NL": true, "NO": true, "PL": true, "PT": true, "RO": true,
	"SE": true, "SI": true, "SK": true, "SM": true, "VA": true,
}

// normIBAN drops spaces and upper-cases, the way IBANs are printed in groups.
func normIBAN(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

// checkIBAN validates an IBAN for real: characters, the country's length,
// and the ISO 7064 mod-97-10 checksum. It returns the reason it is not valid,
// or "".
func checkIBAN(iban string) string {
	if len(iban) < 4 {
		return "iban is too short"
	}
	for i, r := range iban {
		letter := r >= 'A' && r <= 'Z'
		digit := r >= '0' && r <= '9'
		switch {
		case i < 2 && !letter:
			return "iban must start with a two-letter country code"
		case i >= 2 && i < 4 && !digit:
			return "iban check digits must be digits"
		case !letter && !digit:
			return "iban holds letters and digits only"
		}
	}
	n, ok := ibanLengths[iban[:2]]
	if !ok {
		return "iban country " + iban[:2] + " is unknown"
	}
	if len(iban) != n {
		return fmt.Sprintf("iban of %s must have %d characters", iban[:2], n)
	}
	if mod97(iban[4:]+iban[:4]) != 1 {
		return "iban checksum is wrong"
	}
	return ""
}

// mod97 is the remainder of the number that the IBAN's characters spell
// (A=10 ... Z=35).
func mod97(s string) int64 {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			fmt.Fprintf(&b, "%d", r-'A'+10)
		} else {
			b.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(b.String(), 10)
	return new(big.Int).Mod(n, big.NewInt(97)).Int64()
}

// makeIBAN builds a valid IBAN from a country and its BBAN, computing the
// check digits; the seed and automatic requisites use it.
func makeIBAN(country, bban string) string {
	check := 98 - mod97(bban+country+"00")
	return fmt.Sprintf("%s%02d%s", country, check, bban)
}
