/** A provider's payment request the service's payer will not sign; nothing was signed. */
export class PaymentRefused extends Error {}
