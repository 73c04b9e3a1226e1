package banking

// IsLimitCode reports whether code is one of the corporation limit codes
// -114 to -119.
func IsLimitCode(code int) bool {
	return code >= CodeCorporationAmountAboveMax && code <= CodeCorporationLimitReached
}
