<?php
/**
 * Calls to agegate's client API, server-side, with the site's credential.
 *
 * The agegate URL is set by the site's administrator, so it is called with
 * wp_remote_*: wp_safe_remote_* refuses ports other than 80, 443 and 8080, which an
 * agegate on a port of its own (a development or test setup) uses.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** Seconds an API call may take before the visitor is told agegate is unavailable. */
const AGEGATE_TIMEOUT = 10;

/**
 * One request to agegate's client API.
 *
 * @param string     $method GET or POST.
 * @param string     $path   The path under /v1/website/{siteId}/.
 * @param array|null $body   The JSON body, for a POST.
 * @return array{status: int, json: mixed}|WP_Error The answer, or the transport's error.
 */
function agegate_api( string $method, string $path, ?array $body = null ) {
	if ( ! agegate_configured() ) {
		return new WP_Error( 'agegate_unconfigured', 'agegate is not configured' );
	}
	$url  = agegate_setting( 'url' ) . '/v1/website/' . rawurlencode( (string) agegate_setting( 'site_id' ) ) . '/' . $path;
	$args = array(
		'method'      => $method,
		'timeout'     => AGEGATE_TIMEOUT,
		'redirection' => 0,
		'headers'     => array(
			'Authorization' => 'Basic ' . base64_encode( agegate_setting( 'username' ) . ':' . agegate_setting( 'password' ) ), // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode -- HTTP Basic credentials.
			'Accept'        => 'application/json',
		),
	);
	if ( null !== $body ) {
		$args['headers']['Content-Type'] = 'application/json';
		$args['body']                    = wp_json_encode( (object) $body );
	}
	$response = 'POST' === $method ? wp_remote_post( $url, $args ) : wp_remote_get( $url, $args );
	if ( is_wp_error( $response ) ) {
		return $response;
	}
	return array(
		'status' => (int) wp_remote_retrieve_response_code( $response ),
		'json'   => json_decode( wp_remote_retrieve_body( $response ), true ),
	);
}

/**
 * Logs why agegate could not be used (never a credential, a customId or a visitor id).
 *
 * @param string          $what   What was being done.
 * @param array|WP_Error  $answer The answer or the error.
 */
function agegate_log_failure( string $what, $answer ): void {
	if ( is_wp_error( $answer ) ) {
		$why = $answer->get_error_code();
	} else {
		$why = 'HTTP ' . $answer['status'];
		if ( is_array( $answer['json'] ) && isset( $answer['json']['error'] ) ) {
			$why .= ' (error ' . (int) $answer['json']['error'] . ')';
		}
	}
	error_log( 'agegate: ' . $what . ' failed: ' . $why ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the operator needs to know.
}

/**
 * Creates an invite for `$custom_id`.
 *
 * @param string $custom_id The visitor's or user's id.
 * @return string|WP_Error The invite's gateway URL, or why agegate could not be used.
 */
function agegate_create_invite( string $custom_id ) {
	$answer = agegate_api( 'POST', 'invite', array( 'customId' => $custom_id ) );
	if ( is_wp_error( $answer ) || 200 !== $answer['status'] || ! is_array( $answer['json'] )
		|| ! is_string( $answer['json']['url'] ?? null ) ) {
		agegate_log_failure( 'creating an invite', $answer );
		return new WP_Error( 'agegate_unavailable' );
	}
	$url = $answer['json']['url'];
	if ( ! preg_match( '#^https?://#i', $url ) ) {
		agegate_log_failure( 'creating an invite (no gateway URL)', $answer );
		return new WP_Error( 'agegate_unavailable' );
	}
	return $url;
}

/**
 * An invite's status record as agegate has it.
 *
 * @param string $invite_id The invite's id.
 * @return array{status: string, customId: ?string}|WP_Error The record;
 *         `agegate_not_found` for an invite agegate does not know for this site,
 *         `agegate_unavailable` when agegate could not be asked.
 */
function agegate_fetch_invite( string $invite_id ) {
	$answer = agegate_api( 'GET', 'invite/' . rawurlencode( $invite_id ) );
	if ( ! is_wp_error( $answer ) && 404 === $answer['status'] ) {
		return new WP_Error( 'agegate_not_found' );
	}
	$record = ! is_wp_error( $answer ) && 200 === $answer['status'] && is_array( $answer['json'] )
		? ( $answer['json'][0] ?? null ) : null;
	if ( ! is_array( $record ) || ! is_string( $record['status'] ?? null ) ) {
		agegate_log_failure( 'reading an invite', $answer );
		return new WP_Error( 'agegate_unavailable' );
	}
	return array(
		'status'   => $record['status'],
		'customId' => is_string( $record['customId'] ?? null ) ? $record['customId'] : null,
	);
}
