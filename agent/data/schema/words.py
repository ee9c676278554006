"""Header vocabularies that several canonical fields of `fields.SCHEMA` share.

A field's aliases name it; its `against` words point a header elsewhere (a fee, an order id in
a payments file). The words and aliases of more than one field are kept here, once.
"""

from __future__ import annotations

# Header words that name money other than the total or the capture: fees, taxes, shipping,
# discounts, net amounts, part totals and counts, in English and in the languages that exports
# are commonly written in (German, French, Spanish, Dutch, Italian, Portuguese). Headers are
# compared folded (lower case, no accents, see `mapping.normalize_header`), so words are written
# that way here. `untaxed` stands for "excluding tax" (`ex tax`, `HT`, `exkl. MwSt.`).
MONEY_ELSEWHERE = frozenset(
    """
    fee fees tax taxes vat shipping handling insurance discount subtotal converted net outstanding
    lineitem disputed tip duties balance price unit untaxed quantity qty shipped items count
    redeemed gift exchange rate
    gebuhr gebuhren gebuehr mwst ust steuer versand versandkosten rabatt netto nettobetrag
    zwischensumme frais tva port livraison remise reduction sous commission comision gastos envio
    iva descuento neto kosten transactiekosten btw verzendkosten verzending korting subtotaal
    commissione spedizione sconto subtotale taxa frete desconto liquido imposto
    """.split()
)

# Words that name an order (not a payment) in the languages above.
ORDER_WORDS = frozenset(
    "order bestellnummer bestellung auftrag auftragsnummer commande pedido bestelnummer "
    "bestelling ordernummer ordine encomenda".split()
)

ORDER_ID_ALIASES = {
    "order id": 1.0,
    "order number": 0.95,
    "order no": 0.95,
    "order nr": 0.95,
    "order": 0.8,
    "order name": 0.9,
    "order ref": 0.85,
    "order reference": 0.85,
    "bestellnummer": 0.95,
    "bestell nr": 0.95,
    "bestellung": 0.8,
    "auftragsnummer": 0.9,
    "n commande": 0.95,
    "no commande": 0.95,
    "numero commande": 0.95,
    "id commande": 0.95,
    "reference commande": 0.9,
    "commande": 0.8,
    "no pedido": 0.95,
    "n pedido": 0.95,
    "numero pedido": 0.95,
    "id pedido": 0.95,
    "referencia pedido": 0.9,
    "pedido": 0.8,
    "bestelnummer": 0.95,
    "ordernummer": 0.95,
    "bestelling": 0.8,
    "numero ordine": 0.95,
    "n ordine": 0.95,
    "id ordine": 0.95,
    "riferimento ordine": 0.9,
    "ordine": 0.8,
    "numero encomenda": 0.95,
    "encomenda": 0.8,
}

CURRENCY_ALIASES = {
    "currency": 1.0,
    "currency code": 1.0,
    "currency iso code": 1.0,
    "ccy": 0.9,
    "wahrung": 1.0,
    "waehrung": 1.0,
    "devise": 1.0,
    "moneda": 1.0,
    "divisa": 0.95,
    "valuta": 1.0,
    "moeda": 1.0,
}

STATUS_ALIASES = {
    "status": 0.8,
    "statut": 0.8,
    "etat": 0.7,
    "estado": 0.8,
    "stato": 0.8,
    "situacao": 0.8,
}
