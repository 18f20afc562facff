"""The camera over the tank (ui/camera.py), without a display: what part of the tank the pane
shows, at what scale, how it follows, pans, zooms and scrolls at the edge."""

import itertools

import pygame
import pytest

from mirofish.ui.camera import EDGE_DELAY, EDGE_PX, Camera

GRID = (96, 54)
LAPTOP = pygame.Rect(8, 128, 944, 440)  # the tank pane at 1280×720


def camera(pane=LAPTOP, grid=GRID, target=None) -> Camera:
    cam = Camera(grid)
    cam.place(pane)
    cam.update(0.0, target)
    return cam


def shown_px(cam, x, y):
    px, py = cam.to_px(x, y)
    return float(px), float(py)


def test_it_opens_on_the_whole_tank_and_goes_to_20_px_on_the_first_thing_that_matters():
    cam = camera()
    assert cam.mode == "whole" and cam.cell == cam.fit() == 8 and cam.whole_shown  # 96 × 8 ≤ 944, 54 × 8 ≤ 440
    sizes = []
    for _ in range(30):  # a school formed there: the camera zooms down onto it in 0.6 s
        cam.update(1 / 30, (70.0, 40.0))
        sizes.append(cam.cell)
        assert cam.shows(70, 40)  # on screen all the way
    assert sizes == sorted(sizes) and sizes[0] == 8 and max(b - a for a, b in itertools.pairwise(sizes)) <= 2
    assert cam.mode == "follow" and cam.cell == 20 and not cam.whole_shown
    assert cam.pane.collidepoint(shown_px(cam, 70, 40))
    cam.update(0.1, None)  # the school broke up: the view stays
    assert cam.cell == 20 and cam.shows(70, 40)


def test_a_tank_with_a_school_at_its_first_frame_opens_on_it_at_20_px():
    cam = camera(target=(70.0, 40.0))
    assert cam.mode == "follow" and cam.cell == 20 and cam.shows(70, 40)


def test_the_view_never_shows_water_beyond_the_glass_and_centres_a_tank_smaller_than_the_pane():
    cam = camera(target=(0.0, 0.0))  # a fish in the top-left corner
    ox, oy = cam.origin
    assert (ox, oy) == LAPTOP.topleft  # clamped: the tank's corner at the pane's corner
    x0, y0, x1, y1 = cam.visible()
    assert (x0, y0) == (0.0, 0.0) and x1 == pytest.approx(944 / 20) and y1 == pytest.approx(440 / 20)
    cam.update(10.0, (95.0, 53.0))
    x0, y0, x1, y1 = cam.visible()
    assert (x1, y1) == (96.0, 54.0)
    small = camera(pygame.Rect(0, 0, 2400, 1400), target=(5.0, 5.0))
    assert small.cell == 20 and small.whole_shown  # 96 × 20 fits: the same view as the whole tank
    assert small.origin == ((2400 - 1920) // 2, (1400 - 1080) // 2)


def test_pixels_and_cells_are_inverse_through_the_camera():
    cam = camera(target=(40.0, 20.0))
    for cell in ((40, 20), (30.5, 12.25), (55, 29)):
        assert cam.to_cell(shown_px(cam, *cell)) == pytest.approx(cell)
    assert shown_px(cam, 40, 20) == pytest.approx(LAPTOP.center, abs=1)  # the target in the middle


def test_following_glides_smoothly_to_the_target():
    cam = camera(target=(30.0, 27.0))
    path = []
    for _ in range(30):  # a second at 30 frames a second toward a fish 20 cells east
        cam.update(1 / 30, (50.0, 27.0))
        path.append(cam.centre[0])
    steps = [b - a for a, b in zip([30.0, *path], path)]
    assert all(s > 0 for s in steps) and max(steps) < 4  # never a jump, always toward it
    assert path[14] > 49.0 - 5 and path[-1] == pytest.approx(50.0, abs=0.1)  # most of the way in half a second


def test_a_drag_pans_the_view_and_stops_following_until_asked_again():
    cam = camera(target=(48.0, 27.0))
    before = cam.to_cell(LAPTOP.center)
    cam.pan_px(100, -40)  # the water moves with the mouse: 5 cells right, 2 up
    after = cam.to_cell(LAPTOP.center)
    assert after == pytest.approx((before[0] - 5, before[1] + 2))
    assert not cam.following
    cam.update(1.0, (70.0, 27.0))
    assert cam.to_cell(LAPTOP.center) == pytest.approx(after)  # it stays where it was put
    cam.follow()
    cam.update(2.0, (70.0, 27.0))
    assert cam.following and cam.to_cell(LAPTOP.center)[0] == pytest.approx(70.0, abs=0.2)


def test_the_wheel_zooms_at_the_cursor_from_the_whole_tank_to_40_px():
    cam = camera(target=(48.0, 27.0))
    cam.following = False
    cursor = (LAPTOP.x + 200, LAPTOP.y + 100)
    under = cam.to_cell(cursor)
    cam.zoom_at(cursor, 1.25)
    assert cam.cell == 25 and cam.to_cell(cursor) == pytest.approx(under, abs=0.05)  # the cell stays under it
    for _ in range(10):
        cam.zoom_at(cursor, 1.25)
    assert cam.cell == 40
    for _ in range(20):
        cam.zoom_at(cursor, 1 / 1.25)
    assert cam.mode == "whole" and cam.cell == cam.fit() and cam.whole_shown
    cam.zoom_at(cursor, 1.25)  # in again from the whole tank, at the cursor
    assert cam.mode == "follow" and cam.fit() < cam.cell < 20


def test_x_switches_between_the_follow_camera_and_the_whole_tank():
    cam = camera(target=(48.0, 27.0))
    assert cam.toggle() == "whole" and cam.cell == 8 and cam.whole_shown
    cam.pan_px(50, 50)
    assert cam.origin == (LAPTOP.x + (944 - 768) // 2, LAPTOP.y + (440 - 432) // 2)  # nothing to pan
    assert cam.toggle() == "follow" and cam.cell == 20 and cam.following


def test_the_minimap_puts_the_view_where_it_is_clicked():
    cam = camera()
    cam.look_at((80.0, 10.0))
    assert cam.mode == "follow" and not cam.following and cam.cell == 20
    assert cam.to_cell(LAPTOP.center) == pytest.approx(cam._clamp((80.0, 10.0)))
    assert cam.shows(80, 10)


def test_the_mouse_resting_at_the_waters_edge_scrolls_after_a_moment():
    cam = camera(target=(48.0, 27.0))
    start = cam.centre
    right_edge = (LAPTOP.right - EDGE_PX // 2, LAPTOP.centery)
    assert not cam.edge_scroll(right_edge, EDGE_DELAY / 2)  # crossing the band does nothing
    assert cam.centre == start
    assert not cam.edge_scroll((LAPTOP.centerx, LAPTOP.centery), 1 / 30)  # (and leaving it starts over)
    moved = [cam.edge_scroll(right_edge, 1 / 30) for _ in range(30)]
    assert any(moved) and cam.centre[0] > start[0] + 10 and cam.centre[1] == start[1] and not cam.following
    assert not cam.edge_scroll(None, 1.0)  # the mouse left the window


def test_a_tall_pane_and_another_tank():
    cam = camera(pygame.Rect(0, 0, 300, 900), grid=(40, 30), target=(20.0, 15.0))
    assert cam.fit() == 7 and cam.cell == 20
    x0, y0, x1, y1 = cam.visible()
    assert (y0, y1) == (0.0, 30.0) and x1 - x0 == pytest.approx(15.0)  # 30 rows fit: centred; 15 of 40 columns
    cam.set_grid((200, 120))
    cam.update(0.0, (150.0, 100.0))
    assert cam.shows(150, 100)
