<?php
/**
 * The verification's round trip: the button's POST creates an invite server-side and
 * sends the visitor to its gateway page; agegate sends them back to
 * `{home}/?agegate_return=1&vs={inviteId}`, where the invite's status is read from
 * agegate itself (the query string is never trusted) and its customId must be this
 * visitor's.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** Seconds the page to go back to is kept while the visitor is at the gateway. */
const AGEGATE_BACK_TTL = HOUR_IN_SECONDS;

/**
 * The button's POST (admin-post.php, logged in or not): an invite for this visitor and a
 * redirect to its gateway page.
 */
function agegate_handle_verify(): void {
	$nonce = isset( $_POST['agegate_nonce'] ) ? sanitize_text_field( wp_unslash( $_POST['agegate_nonce'] ) ) : '';
	if ( ! wp_verify_nonce( $nonce, 'agegate_verify' ) ) {
		wp_die(
			esc_html__( 'This page has expired. Go back, reload it and press the button again.', 'agegate' ),
			esc_html__( 'Please try again', 'agegate' ),
			array(
				'response'  => 403,
				'back_link' => true,
			)
		);
	}
	$back = isset( $_POST['agegate_back'] ) ? esc_url_raw( wp_unslash( $_POST['agegate_back'] ) ) : '';
	$back = wp_validate_redirect( $back, home_url( '/' ) );
	$url  = agegate_create_invite( agegate_custom_id( true ) );
	if ( is_wp_error( $url ) ) {
		agegate_send_unavailable_page();
	}
	agegate_set_cookie( AGEGATE_BACK_COOKIE, $back, time() + AGEGATE_BACK_TTL );
	nocache_headers();
	// The gateway is another site (agegate's), so not wp_safe_redirect.
	wp_redirect( $url, 303, 'agegate' ); // phpcs:ignore WordPress.Security.SafeRedirect.wp_redirect_wp_redirect -- agegate's gateway page.
	exit;
}
add_action( 'admin_post_agegate_verify', 'agegate_handle_verify' );
add_action( 'admin_post_nopriv_agegate_verify', 'agegate_handle_verify' );

/** The return route: `{home}/?agegate_return=1&vs={inviteId}`. */
function agegate_handle_return(): void {
	if ( ! isset( $_GET['agegate_return'] ) ) { // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- agegate's redirect carries no nonce; the invite is checked with agegate.
		return;
	}
	$vs = isset( $_GET['vs'] ) ? sanitize_text_field( wp_unslash( $_GET['vs'] ) ) : ''; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- as above.
	if ( 1 !== preg_match( '/^[A-Za-z0-9_-]{1,64}$/', $vs ) ) {
		agegate_send_gate_page( __( 'Your age could not be confirmed. Please try again.', 'agegate' ), 400 );
	}
	$custom_id = agegate_custom_id( false );
	$record    = agegate_fetch_invite( $vs );
	if ( is_wp_error( $record ) && 'agegate_unavailable' === $record->get_error_code() ) {
		agegate_send_unavailable_page();
	}
	$mine = ! is_wp_error( $record ) && '' !== $custom_id && is_string( $record['customId'] )
		&& hash_equals( $custom_id, $record['customId'] );
	if ( ! $mine ) {
		agegate_send_gate_page( __( 'Your age could not be confirmed. Please try again.', 'agegate' ), 403 );
	}
	if ( 'verified' !== $record['status'] ) {
		$notice = 'expired' === $record['status']
			? __( 'The verification has expired. Please start again.', 'agegate' )
			: __( 'The verification is not finished yet. Please try again.', 'agegate' );
		agegate_send_gate_page( $notice, 403 );
	}
	agegate_mark_verified();
	$back = agegate_back_url();
	agegate_set_cookie( AGEGATE_BACK_COOKIE, '', time() - YEAR_IN_SECONDS );
	nocache_headers();
	wp_safe_redirect( $back, 303, 'agegate' );
	exit;
}
add_action( 'template_redirect', 'agegate_handle_return', 1 );
