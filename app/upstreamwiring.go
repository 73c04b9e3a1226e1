package app

import (
	"github.com/fingraph/fingraph/resolvers"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Resolvers and loaders declare what they need of the upstreams as small
// interfaces of their own; here the real clients' services are wired into
// them. Each field assignment below is also the compile-time proof that a
// client's service still fits the interface its user declared.

// resolverPayments is the payments client as resolvers use it.
func resolverPayments(c *payments.Client) resolvers.Payments {
	return resolvers.Payments{
		PaymentsFeatures: c,
		Customers:        c.Customers,
		Orders:           c.Orders,
		OrderTokens:      c.OrderTokens,
		Webhooks:         c.Webhooks,
		Events:           c.Events,
		Individuals:      c.Individuals,
		PendingActions:   c.PendingActions,
	}
}

// resolverBanking is the banking client as resolvers use it.
func resolverBanking(c *banking.Client) resolvers.Banking {
	return resolvers.Banking{
		BankingFeatures: c,
		Auth:            c.Auth,
		Persons:         c.Persons,
		Corporations:    c.Corporations,
		APIKeys:         c.APIKeys,
		Cards:           c.Cards,
		KYC:             c.KYC,
		Feedback:        c.Feedback,
		Lookup:          c.Lookup,
		Wallets:         c.Wallets,
		Requisites:      c.Requisites,
		Transactions:    c.Transactions,
		Limits:          c.Limits,
		Reports:         c.Reports,
	}
}

// loaderSources are the clients as the per-operation read cache reads them.
func loaderSources(p *payments.Client, b *banking.Client) (loaders.PaymentsSource, loaders.BankingSource) {
	return loaders.PaymentsSource{Customers: p.Customers, Orders: p.Orders, PendingActions: p.PendingActions},
		loaders.BankingSource{
			Persons:      b.Persons,
			Corporations: b.Corporations,
			Cards:        b.Cards,
			Transactions: b.Transactions,
			APIKeys:      b.APIKeys,
			KYC:          b.KYC,
			Wallets:      b.Wallets,
			Requisites:   b.Requisites,
			Invoices:     b.Invoices,
			Limits:       b.Limits,
		}
}
