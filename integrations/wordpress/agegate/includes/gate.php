<?php
/**
 * What is gated, and keeping it from visitors who are not verified: the gate page in
 * place of a gated page, a notice in place of a gated post's content wherever it is
 * written (lists, feeds, the REST API, embeds), and the `[agegate]` shortcode.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** The post meta that marks a post or page as gated ('1'). */
const AGEGATE_META = '_agegate_required';

/**
 * Whether a post is gated: everything in gate-everything mode, else a post whose box
 * "Requires age verification" is ticked.
 *
 * @param WP_Post|int|null $post The post.
 */
function agegate_post_gated( $post ): bool {
	if ( agegate_setting( 'gate_all' ) ) {
		return true;
	}
	$post = get_post( $post );
	return $post instanceof WP_Post && '1' === get_post_meta( $post->ID, AGEGATE_META, true );
}

/**
 * Whether a post's content must be withheld from the current visitor. Someone who may
 * edit the post sees it (they can read it in the editor anyway).
 *
 * @param WP_Post|int|null $post The post.
 */
function agegate_withhold( $post ): bool {
	$post = get_post( $post );
	if ( ! $post instanceof WP_Post || ! agegate_post_gated( $post ) ) {
		return false;
	}
	return ! agegate_is_verified() && ! current_user_can( 'edit_post', $post->ID );
}

/** Whether the request is for a front-end page (never admin, login, REST, feeds). */
function agegate_front_end_page(): bool {
	if ( is_admin() || wp_doing_ajax() || wp_doing_cron() || is_feed() || is_robots() || is_favicon()
		|| is_embed() || ( defined( 'REST_REQUEST' ) && REST_REQUEST ) ) {
		return false;
	}
	return ! is_trackback();
}

// A gated page is replaced by the gate page for a visitor who is not verified.
add_action(
	'template_redirect',
	static function () {
		if ( ! agegate_front_end_page() ) {
			return;
		}
		if ( agegate_setting( 'gate_all' ) ) {
			$gated = ! agegate_is_verified() && ! current_user_can( 'edit_posts' );
		} else {
			$gated = is_singular() && agegate_withhold( get_queried_object_id() );
		}
		if ( $gated ) {
			agegate_send_gate_page();
		}
		$post = is_singular() ? get_post( get_queried_object_id() ) : null;
		if ( agegate_setting( 'gate_all' ) || ( $post && ( agegate_post_gated( $post ) || has_shortcode( $post->post_content, 'agegate' ) ) ) ) {
			// The page differs by visitor: no shared cache may keep it.
			nocache_headers();
		}
	},
	5
);

// In lists, feeds, embeds and the REST API a gated post's content and excerpt become a notice.
$agegate_withheld_text = static function ( $text ) {
	if ( ! agegate_withhold( get_post() ) ) {
		return $text;
	}
	$in_page = ! is_feed() && ! ( defined( 'REST_REQUEST' ) && REST_REQUEST ) && ! is_embed();
	return agegate_notice( $in_page );
};
add_filter( 'the_content', $agegate_withheld_text, PHP_INT_MAX );
add_filter( 'get_the_excerpt', $agegate_withheld_text, PHP_INT_MAX );
add_filter( 'the_content_feed', $agegate_withheld_text, PHP_INT_MAX );
add_filter( 'the_excerpt_rss', $agegate_withheld_text, PHP_INT_MAX );
add_filter(
	'comment_text_rss',
	static function ( $text ) {
		return agegate_withhold( get_post() ) ? '' : $text;
	},
	PHP_INT_MAX
);

// The REST API: each field that carries the content, for every post type shown there.
add_action(
	'rest_api_init',
	static function () {
		foreach ( get_post_types( array( 'show_in_rest' => true ) ) as $type ) {
			add_filter( "rest_prepare_{$type}", 'agegate_rest_withhold', PHP_INT_MAX, 2 );
		}
	}
);

/**
 * Removes a gated post's content from a REST answer.
 *
 * @param WP_REST_Response $response The answer.
 * @param WP_Post          $post     The post.
 * @return WP_REST_Response
 */
function agegate_rest_withhold( $response, $post ) {
	if ( ! $response instanceof WP_REST_Response || ! agegate_withhold( $post ) ) {
		return $response;
	}
	$data   = $response->get_data();
	$notice = agegate_notice( false );
	foreach ( array( 'content', 'excerpt' ) as $field ) {
		if ( isset( $data[ $field ] ) && is_array( $data[ $field ] ) ) {
			$data[ $field ]['rendered'] = 'content' === $field ? $notice : '';
			unset( $data[ $field ]['raw'], $data[ $field ]['block_version'] );
			$data[ $field ]['protected'] = true;
		}
	}
	$response->set_data( $data );
	return $response;
}

// [agegate]…[/agegate]: the enclosed content for a verified visitor, else the button.
add_action(
	'init',
	static function () {
		add_shortcode(
			'agegate',
			static function ( $atts, $content = '' ) {
				if ( agegate_is_verified() || current_user_can( 'edit_post', get_the_ID() ) ) {
					return do_shortcode( (string) $content );
				}
				$in_page = ! is_feed() && ! ( defined( 'REST_REQUEST' ) && REST_REQUEST ) && ! is_embed();
				return agegate_notice( $in_page );
			}
		);
	}
);

add_action(
	'wp_enqueue_scripts',
	static function () {
		wp_enqueue_style( 'agegate', agegate_stylesheet_url(), array(), '1.0.0' );
	}
);
