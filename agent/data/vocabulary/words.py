"""The words of the vocabulary: what each status and row-kind value means, by language.

Tables only (`agent.data.vocabulary` reads them). Values and words are compared folded
(`fold`); phrases are written comma-separated. English, German, French, Spanish, Italian,
Dutch, Portuguese, Polish and Swedish, and the platforms' own codes.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Final, Literal, get_args

OrderMeaning = Literal["paid", "pending", "voided", "refunded", "partially_refunded"]
PaymentMeaning = Literal[
    "capture",
    "failed",
    "pending",
    "authorisation",
    "refund",
    "chargeback",
    "fee",
    "payout",
    "tax",
    "shipping",
    "adjustment",
]
ORDER_MEANINGS: Final[tuple[OrderMeaning, ...]] = get_args(OrderMeaning)
PAYMENT_MEANINGS: Final[tuple[PaymentMeaning, ...]] = get_args(PaymentMeaning)

SPECIAL_LETTERS = str.maketrans({"ł": "l", "Ł": "l", "ß": "ss", "ø": "o", "Ø": "o", "đ": "d"})


def fold(value: str) -> str:
    """`value` as the vocabulary compares it: lower case, no accents, words separated by one
    space (`Remboursé` -> `rembourse`, `wc-on-hold` -> `wc on hold`, `Opłacone` -> `oplacone`)."""
    text = unicodedata.normalize("NFKD", value.translate(SPECIAL_LETTERS).casefold())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def _phrases(text: str) -> frozenset[str]:
    """Comma-separated phrases, each folded."""
    return frozenset(fold(p) for p in text.split(",") if p.strip())


# --- orders -------------------------------------------------------------------------------------

ORDER_WORDS: dict[OrderMeaning, frozenset[str]] = {
    "paid": _phrases(
        "paid, payed, complete, completed, captured, settled, success, succeeded, processing, "
        "awaiting fulfillment, awaiting shipment, awaiting pickup, partially shipped, "
        "in payment, in preparation, preparation in progress, delivery in progress, "
        "ready to ship, ready for pickup, "
        "shipped, delivered, fulfilled, invoiced, payment received, payment accepted, "
        "bezahlt, abgeschlossen, erledigt, versandt, versendet, geliefert, zahlung erhalten, "
        "zahlung akzeptiert, in bearbeitung, "
        "eingegangen, ausgeliefert, zugestellt, "
        "paye, payee, paiement accepte, termine, terminee, expedie, expediee, livre, livree, "
        "en cours de preparation, "
        "accepte, acceptee, "
        "pagado, pagada, completado, completada, pago aceptado, enviado, enviada, entregado, "
        "en preparacion, procesando, "
        "preparacion, preparacion en proceso, aceptado, "
        "pagato, pagata, completato, completata, pagamento accettato, spedito, consegnato, "
        "in lavorazione, "
        "preparazione, preparazione in corso, consegna, consegna in corso, accettato, "
        "betaald, voltooid, afgerond, betaling aanvaard, betaling ontvangen, verzonden, geleverd, "
        "in behandeling, "
        "afgeleverd, voorbereid, aanvaard, "
        "pago, paga, concluido, concluida, pagamento aceito, pagamento confirmado, entregue, "
        "processando, aprovado, "
        "aceite, aceito, preparacao, preparacao em curso, "
        "zaplacone, zaplacono, oplacone, oplacono, zrealizowane, zakonczone, wyslane, "
        "dostarczone, w realizacji, platnosc zaakceptowana, "
        "przygotowanie, przygotowywane, zaakceptowana, zaakceptowano, przyjeta, przyjete, "
        "betald, betalad, slutford, levererad, skickad, behandlas, genomford, godkand, "
        "forbereds, forberedelse"
    ),
    "pending": _phrases(
        "pending, unpaid, awaiting, awaiting payment, pending payment, on hold, hold, open, "
        "authorized, authorised, payment review, new, draft, "
        "ausstehend, offen, wartend, unbezahlt, zahlung ausstehend, warten auf zahlung, "
        "warten, "
        "en attente, attente, impaye, en attente de paiement, en attente de virement, "
        "en attente de cheque, "
        "pendiente, en espera, pendiente de pago, esperando pago, en espera de pago, "
        "in attesa, attesa, in attesa di pagamento, in sospeso, "
        "in afwachting, openstaand, wachtend, onbetaald, wacht op betaling, "
        "pendente, aguardando, aguardando pagamento, em espera, "
        "aguardar, "
        "oczekujace, oczekuje, oczekiwanie na platnosc, nieoplacone, niezaplacone, nowe, "
        "vantande, vantar, obetald, vantar pa betalning, invantar"
    ),
    "voided": _phrases(
        "voided, void, cancelled, canceled, cancel, failed, declined, expired, abandoned, refused, "
        "error, payment error, "
        "rejected, "
        "storniert, annulliert, abgebrochen, abgelehnt, fehlgeschlagen, verworfen, "
        "fehler, "
        "annule, annulee, echoue, echouee, refuse, refusee, abandonne, "
        "erreur, "
        "cancelado, cancelada, anulado, anulada, fallido, rechazado, "
        "annullato, annullata, cancellato, cancellata, fallito, rifiutato, "
        "errore, "
        "geannuleerd, mislukt, geweigerd, vervallen, "
        "betalingsfout, fout, "
        "falhou, recusado, expirado, "
        "erro, "
        "anulowane, anulowano, odrzucone, nieudane, wygasle, "
        "blad, "
        "avbruten, avbrutet, annullerad, makulerad, misslyckad, nekad, betalningsfel, fel"
    ),
    "refunded": _phrases(
        "refunded, refund, returned, reversed, charged back, chargeback, credited, "
        "erstattet, ruckerstattet, zuruckerstattet, erstattung, ruckerstattung, zuruckgezahlt, "
        "rembourse, remboursee, remboursement, "
        "reembolsado, reembolsada, devuelto, devuelta, reembolso, "
        "rimborsato, rimborsata, rimborso, "
        "terugbetaald, terugbetaling, gerestitueerd, geretourneerd, "
        "estornado, estornada, devolvido, devolvida, "
        "zwrocone, zwrot, zwrocono, "
        "aterbetald, aterbetalad, aterbetalning, returnerad"
    ),
    "partially_refunded": _phrases(
        "teilerstattet, teilweise erstattet, remboursement partiel, reembolso parcial, "
        "rimborso parziale, gedeeltelijk terugbetaald, estorno parcial, czesciowy zwrot"
    ),
}
# Platform codes whose meaning is their own: WooCommerce's `wc-*` statuses, Magento's states.
ORDER_CODES: dict[str, OrderMeaning] = {
    # PrestaShop's backorder states say in brackets whether the order was paid.
    "on backorder paid": "paid",
    "backorder paid": "paid",
    "on backorder not paid": "pending",
    "backorder not paid": "pending",
    "en attente de reapprovisionnement paye": "paid",
    "en attente de reapprovisionnement non paye": "pending",
    "pedido pendiente por falta de stock pagado": "paid",
    "pedido pendiente por falta de stock no pagado": "pending",
    "in attesa di rifornimento pagato": "paid",
    "in attesa di rifornimento non pagato": "pending",
    "artikel nicht auf lager bezahlt": "paid",
    "artikel nicht auf lager nicht bezahlt": "pending",
    "aguardando reposicao de estoque pago": "paid",
    "aguardando reposicao de estoque nao pago": "pending",
    "in nabestelling betaald": "paid",
    "in nabestelling niet betaald": "pending",
    # Cash on delivery: not paid until the parcel is.
    "contra reembolso": "pending",
    "en espera de validacion por contra reembolso": "pending",
    "zahlung in bearbeitung": "pending",
    "betaling in behandeling": "pending",
    "paiement en cours": "pending",
    "wc pending": "pending",
    "wc processing": "paid",
    "wc on hold": "pending",
    "wc completed": "paid",
    "wc cancelled": "voided",
    "wc refunded": "refunded",
    "wc failed": "voided",
    "wc checkout draft": "pending",
    "pending payment": "pending",
    "payment review": "pending",
    "closed": "refunded",  # Magento: a credit memo closed the order
    "canceled reversal": "paid",
}
PARTIAL = _phrases(
    "partial, partially, part, teilweise, teil, partiel, partielle, partiellement, parcial, "
    "parcialmente, parziale, parzialmente, gedeeltelijk, gedeeltelijke, czesciowo, "
    "czesciowy, czesciowe, delvis"
)
NEGATIONS = _phrases("not, no, non, nicht, niet, nao, ej, inte, nie, un")
ORDER_PRECEDENCE: tuple[OrderMeaning, ...] = ("voided", "refunded", "pending", "paid")


# --- payments -----------------------------------------------------------------------------------

PAYMENT_WORDS: dict[PaymentMeaning, frozenset[str]] = {
    "capture": _phrases(
        "captured, capture, settled, settle, settling, settlement, succeeded, success, "
        "successful, paid, completed, complete, sale, sales, charge, charged, payment, "
        "purchase, disputed, "
        "submitted for settlement, settled successfully, captured pending settlement, "
        "bezahlt, abgeschlossen, erfolgreich, gebucht, zahlung, belastet, eingezogen, verbucht, "
        "paye, reussi, termine, accepte, paiement, encaisse, regle, "
        "completado, pagado, aprobado, pago, cobrado, capturado, cobro, liquidado, "
        "completato, pagato, riuscito, pagamento, incassato, addebitato, "
        "betaald, voltooid, geslaagd, betaling, ontvangen, "
        "concluido, aprovado, recebido, "
        "zaplacono, zaplacone, oplacone, zrealizowana, zakonczona, udana, platnosc, pobrano, "
        "zaksiegowana, wplata, "
        "betald, genomford, slutford, lyckad, debiterad, betalning, mottagen, "
        "settledbulk, sentforsettle"
    ),
    "failed": _phrases(
        "failed, failure, declined, denied, rejected, refused, error, expired, blocked, "
        "canceled, cancelled, voided, void, incomplete, uncaptured, unsuccessful, abandoned, "
        "unpaid, requires payment method, could not void, failed review, general error, "
        "fehlgeschlagen, abgelehnt, storniert, abgebrochen, verweigert, abgelaufen, gescheitert, "
        "echoue, echec, refuse, annule, expire, rejete, "
        "fallido, rechazado, cancelado, denegado, anulado, caducado, expirado, "
        "fallito, rifiutato, annullato, negato, scaduto, errore, "
        "mislukt, geweigerd, geannuleerd, verlopen, afgewezen, "
        "falhou, recusado, negado, falha, "
        "nieudana, odrzucona, anulowana, odrzucono, anulowano, wygasla, blad, "
        "misslyckad, nekad, avbruten, avvisad, utgangen, "
        "refused, cancelled"
    ),
    "pending": _phrases(
        "pending, processing, open, hold, on hold, awaiting, waiting, initiated, scheduled, "
        "created, requires, in progress, unclaimed, uncleared, memo, received, under review, "
        "sentforrefund, requires capture, requires action, requires confirmation, "
        "ausstehend, offen, wartend, in bearbeitung, vorgemerkt, "
        "en attente, attente, en cours, "
        "pendiente, en proceso, procesando, "
        "in attesa, attesa, in corso, sospeso, "
        "in afwachting, openstaand, wachtend, in behandeling, "
        "pendente, aguardando, processando, em processamento, "
        "oczekujaca, oczekujace, w toku, przetwarzanie, "
        "vantande, pagaende, behandlas"
    ),
    "authorisation": _phrases(
        "authorization, authorisation, authorized, authorised, auth, preauthorization, "
        "authorized pending capture, general authorization, "
        "autorisiert, autorisierung, autorisation, autorise, autorizacion, autorizado, "
        "autorizzazione, autorizzato, autorisatie, geautoriseerd, autorizacao, autoryzacja, "
        "autoryzowana, auktorisering, auktoriserad"
    ),
    "refund": _phrases(
        "refund, refunded, refunds, return, returned, returns, reversal, reversed, credit, "
        "payment refund, refund settled successfully, refund pending settlement, refundedbulk, "
        "erstattet, erstattung, ruckerstattung, ruckerstattet, gutschrift, zuruckgezahlt, "
        "ruckzahlung, "
        "rembourse, remboursement, avoir, "
        "reembolso, reembolsado, devolucion, devuelto, "
        "rimborso, rimborsato, stornato, "
        "terugbetaling, terugbetaald, restitutie, terugstorting, "
        "estorno, estornado, devolucao, "
        "zwrot, zwrocono, zwrocona, "
        "aterbetalning, aterbetald, aterbetalad, retur"
    ),
    "chargeback": _phrases(
        "chargeback, chargebacks, dispute, disputes, charged back, chargedback, "
        "secondchargeback, second chargeback, notification of chargeback, "
        "ruckbelastung, lastschriftruckgabe, retrofacturation, contracargo, contestazione, "
        "terugboeking, obciazenie zwrotne"
    ),
    "fee": _phrases(
        "fee, fees, commission, application fee, stripe fee, network cost, paymentcost, "
        "misccosts, invoicededuction, marketing, "
        "gebuhr, gebuhren, gebuehr, provision, frais, comision, tarifa, commissione, "
        "transactiekosten, kosten, taxa, oplata, prowizja, avgift"
    ),
    "payout": _phrases(
        "payout, payouts, merchantpayout, transfer, deposit, withdrawal, topup, "
        "balancetransfer, payout reversal, general withdrawal, bank deposit, "
        "auszahlung, uberweisung, versement, virement, retiro, prelievo, bonifico, "
        "uitbetaling, overboeking, saque, repasse, wyplata, przelew, utbetalning, overforing, "
        "insattning"
    ),
    "tax": _phrases(
        "tax, taxes, vat, sales tax, steuer, mwst, ust, tva, taxe, iva, impuesto, imposta, "
        "btw, belasting, imposto, podatek, moms, skatt"
    ),
    "shipping": _phrases(
        "shipping, postage, shipping label, versand, versandkosten, porto, livraison, envio, "
        "spedizione, verzending, verzendkosten, frete, wysylka, dostawa, frakt"
    ),
    "adjustment": _phrases(
        "adjustment, adjustments, correction, other adjustment, depositcorrection, "
        "currency conversion, "
        "general currency conversion, reserve transaction, "
        "anpassung, korrektur, ajustement, ajuste, rettifica, aanpassing, correctie, korekta, "
        "justering"
    ),
}
# Refund words that are a state (a participle: `refunded`, `Rimborsato`) rather than a record
# (`refund`, `credit`, `RETURN`): on a capture row they say that capture's money went back.
REFUNDED_STATES = _phrases(
    "refunded, partially refunded, reversed, charged back, chargedback, erstattet, "
    "ruckerstattet, zuruckerstattet, teilweise erstattet, rembourse, remboursee, reembolsado, "
    "reembolsada, rimborsato, rimborsata, terugbetaald, estornado, estornada, reembolsado, "
    "zwrocono, zwrocona, zwrocone, aterbetald, aterbetalad"
)

# Whole values whose words would mislead: Authorize.Net's `Captured/Pending Settlement` took
# the money; Stripe's `refund_failure` put a refund's money back; PayPal's `Canceled_Reversal`
# gave a reversed payment back to the merchant.
PAYMENT_CODES: dict[str, PaymentMeaning] = {
    "payment received": "capture",
    "payment sent": "payout",  # PayPal: the account paid someone
    "prior authorization capture": "capture",
    "authorization w auto capture": "capture",
    "charge failure": "chargeback",  # Stripe: a captured debit that bounced took money back
    "captured pending settlement": "capture",
    "settled successfully": "capture",
    "submitted for settlement": "capture",
    "authorized pending capture": "authorisation",
    "auth capture": "capture",  # Authorize.Net's action codes
    "prior auth capture": "capture",
    "capture only": "capture",
    "auth only": "authorisation",
    "refund settled successfully": "refund",
    "refund pending settlement": "refund",
    "partial capture reversal": "adjustment",
    "payment reversal": "chargeback",
    "void of authorization": "failed",
    "hold on balance for dispute investigation": "pending",
    "express checkout payment": "capture",
    "website payment": "capture",
    "mobile payment": "capture",
    "subscription payment": "capture",
    "general payment": "capture",
    "pre approved payment bill user payment": "capture",
}
# Money coming back to the merchant after a refund or a chargeback (a failed refund, a won
# dispute): none of the kinds says it (read as a refund it would count twice, ignored it would
# read the refund as done), so such a value is always asked about.
REVERSED_RETURNS = _phrases(
    "refund failure, refund reversal, reversal of refund, refundedreversed, chargeback reversal, "
    "chargebackreversed, chargeback reversed, dispute reversal, dispute won, chargeback won, "
    "canceled reversal, cancelled reversal, payment failure refund, storno der gutschrift, "
    "ruckbelastung storniert"
)
PAYMENT_PRECEDENCE: tuple[PaymentMeaning, ...] = (
    "failed",
    "authorisation",
    "pending",
    "fee",
    "tax",
    "shipping",
    "payout",
    "adjustment",
    "chargeback",
    "refund",
    "capture",
)

# How a customer paid: a column of these is a tender, never the row's kind.
TENDER_PHRASES = _phrases(
    "credit card, debit card, card, bank transfer, wire transfer, direct debit, "
    "sepa direct debit, bank account, e check, echeck, gift card, apple pay, google pay, "
    "amazon pay, cash on delivery, bank wire, virement bancaire, carte bancaire, "
    "carte de credit, tarjeta, tarjeta de credito, transferencia bancaria, carta di credito, "
    "bonifico bancario, bankoverschrijving, creditcard, kreditkarte, lastschrift, "
    "uberweisung vorkasse, vorkasse, rechnung, invoice, kartenzahlung, cartao, "
    "cartao de credito, boleto, pix, przelewy24, blik, swish, karta, kort, faktura"
)
TENDER_WORDS = _phrases(
    "card, cards, visa, mastercard, amex, maestro, discover, jcb, diners, unionpay, "
    "paypal, klarna, sepa, ideal, bancontact, sofort, giropay, eps, twint, cash, cheque, "
    "check, ach, bizum, satispay, multibanco, mbway, wallet, applepay, googlepay, "
    "kreditkarte, creditcard, karte, carte, tarjeta, carta, kaart, cartao"
)


# --- codes that are only numbers ----------------------------------------------------------------

# Published numeric code sets: a column of such codes is asked about, with this proposal.
NUMERIC_CODES: tuple[tuple[str, dict[str, PaymentMeaning]], ...] = (
    (
        "Authorize.Net response codes",
        {"1": "capture", "2": "failed", "3": "failed", "4": "pending"},
    ),
)


# --- the vocabulary in force --------------------------------------------------------------------


def builtin_content() -> dict[str, object]:
    return {
        "orders": {m: sorted(w) for m, w in ORDER_WORDS.items()},
        "order_codes": dict(sorted(ORDER_CODES.items())),
        "payments": {m: sorted(w) for m, w in PAYMENT_WORDS.items()},
        "payment_codes": dict(sorted(PAYMENT_CODES.items())),
        "tender": sorted(TENDER_PHRASES | TENDER_WORDS),
        "reversed_returns": sorted(REVERSED_RETURNS),
        "refunded_states": sorted(REFUNDED_STATES),
        "numeric": [[n, dict(sorted(c.items()))] for n, c in NUMERIC_CODES],
    }


BUILTIN_DIGEST: Final[str] = (
    "sha256:"
    + hashlib.sha256(
        json.dumps(builtin_content(), sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
)
"""The digest of the built-in words: part of every policy's version."""
