<?php
/**
 * `POST {home}/wp-json/agegate/v1/webhook`: agegate's events, signed as Standard Webhooks
 * sign them. An `invite.verified` whose customId is a user's id marks that user verified.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** How far a webhook's timestamp may be from now, in seconds. */
const AGEGATE_WEBHOOK_TOLERANCE = 300;

/**
 * Whether `$signatures` (the webhook-signature header: space-separated `v1,<base64>`)
 * holds a valid signature of the message by `$secret` (`whsec_<base64>`).
 *
 * @param string $secret     The site's webhook secret.
 * @param string $id         The webhook-id header.
 * @param string $timestamp  The webhook-timestamp header.
 * @param string $body       The raw body.
 * @param string $signatures The webhook-signature header.
 */
function agegate_webhook_signed( string $secret, string $id, string $timestamp, string $body, string $signatures ): bool {
	$key = base64_decode( (string) preg_replace( '/^whsec_/', '', $secret ), true ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_decode -- the secret's format.
	if ( false === $key || '' === $key ) {
		return false;
	}
	$expected = base64_encode( hash_hmac( 'sha256', $id . '.' . $timestamp . '.' . $body, $key, true ) ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode -- the signature's format.
	$found    = false;
	foreach ( preg_split( '/\s+/', trim( $signatures ) ) as $signature ) {
		$parts = explode( ',', $signature, 2 );
		// Every candidate is compared, so the time taken does not tell which matched.
		if ( 2 === count( $parts ) && 'v1' === $parts[0] && hash_equals( $expected, $parts[1] ) ) {
			$found = true;
		}
	}
	return $found;
}

/**
 * Receives one webhook.
 *
 * @param WP_REST_Request $request The request.
 * @return WP_REST_Response
 */
function agegate_receive_webhook( WP_REST_Request $request ): WP_REST_Response {
	$refuse    = static function ( string $why ): WP_REST_Response {
		return new WP_REST_Response(
			array(
				'code'    => 'agegate_webhook_refused',
				'message' => $why,
			),
			401
		);
	};
	$secret    = (string) agegate_setting( 'webhook_secret' );
	$id        = (string) $request->get_header( 'webhook-id' );
	$timestamp = (string) $request->get_header( 'webhook-timestamp' );
	$body      = (string) $request->get_body();
	if ( '' === $secret || '' === $id || strlen( $id ) > 255 || ! ctype_digit( $timestamp ) ) {
		return $refuse( 'missing webhook headers or no webhook secret configured' );
	}
	if ( ! agegate_webhook_signed( $secret, $id, $timestamp, $body, (string) $request->get_header( 'webhook-signature' ) ) ) {
		return $refuse( 'bad signature' );
	}
	if ( abs( time() - (int) $timestamp ) > AGEGATE_WEBHOOK_TOLERANCE ) {
		return $refuse( 'timestamp outside the tolerance' );
	}
	// A webhook-id seen before is a replay (or a retry of an event already handled):
	// acknowledged, so agegate stops sending it, and nothing is changed. Ids are kept
	// beyond the tolerance, after which the timestamp refuses the message anyway.
	$seen = 'agegate_wh_' . hash( 'sha256', $id );
	if ( false !== get_transient( $seen ) ) {
		return new WP_REST_Response(
			array(
				'received'  => true,
				'duplicate' => true,
			),
			200
		);
	}
	set_transient( $seen, 1, 2 * AGEGATE_WEBHOOK_TOLERANCE + MINUTE_IN_SECONDS );
	$event = json_decode( $body, true );
	$data  = is_array( $event ) && is_array( $event['data'] ?? null ) ? $event['data'] : array();
	if ( is_array( $event ) && 'invite.verified' === ( $event['type'] ?? null )
		&& strtolower( (string) ( $data['siteId'] ?? '' ) ) === strtolower( (string) agegate_setting( 'site_id' ) )
		&& 'verified' === ( $data['status'] ?? null )
		&& is_string( $data['customId'] ?? null ) && ctype_digit( $data['customId'] ) ) {
		$user = get_user_by( 'id', (int) $data['customId'] );
		if ( $user ) {
			agegate_mark_user_verified( $user->ID );
		}
	}
	return new WP_REST_Response( array( 'received' => true ), 200 );
}

add_action(
	'rest_api_init',
	static function () {
		register_rest_route(
			'agegate/v1',
			'/webhook',
			array(
				'methods'             => 'POST',
				'callback'            => 'agegate_receive_webhook',
				// Anyone may post; only a valid signature changes anything.
				'permission_callback' => '__return_true',
			)
		);
	}
);
