from generation.citations import map_markers


def test_valid_markers_are_kept():
    mapped = map_markers("Herons wait [1]. They fish [2].", 3)

    assert mapped.text == "Herons wait [1]. They fish [2]."
    assert mapped.order == [1, 2]


def test_a_marker_naming_no_passage_is_stripped():
    mapped = map_markers("Herons wait [1]. They fly to the moon [7].", 3)

    assert mapped.text == "Herons wait [1]. They fly to the moon."
    assert mapped.order == [1]


def test_marker_zero_names_no_passage():
    assert map_markers("Nothing [0].", 3).text == "Nothing."


def test_markers_are_renumbered_densely_by_first_appearance():
    mapped = map_markers("First [3]. Second [1]. First again [3].", 3)

    assert mapped.text == "First [1]. Second [2]. First again [1]."
    assert mapped.order == [3, 1]


def test_a_list_inside_one_marker_becomes_single_markers():
    mapped = map_markers("Both say so [2, 1].", 2)

    assert mapped.text == "Both say so [1][2]."
    assert mapped.order == [2, 1]


def test_adjacent_markers_stay_single_markers():
    mapped = map_markers("Both say so [1][2].", 2)

    assert mapped.text == "Both say so [1][2]."
    assert mapped.order == [1, 2]


def test_a_range_names_each_passage_in_it():
    mapped = map_markers("All agree [2-4].", 4)

    assert mapped.text == "All agree [1][2][3]."
    assert mapped.order == [2, 3, 4]


def test_a_repeated_marker_is_kept_once():
    assert map_markers("Twice [1][1].", 1).text == "Twice [1]."
    assert map_markers("Twice [1, 1].", 1).text == "Twice [1]."


def test_a_list_with_an_unknown_number_keeps_only_the_known_ones():
    mapped = map_markers("Partly [1, 9].", 2)

    assert mapped.text == "Partly [1]."
    assert mapped.order == [1]


def test_a_year_in_brackets_is_not_a_marker():
    mapped = map_markers("The survey [2020] found it [1].", 1)

    assert mapped.text == "The survey [2020] found it [1]."
    assert mapped.order == [1]


def test_stripping_a_marker_leaves_no_space_before_punctuation():
    mapped = map_markers("Herons fish [5] , and they wait [6] ; then fly [9] !", 2)

    assert mapped.text == "Herons fish, and they wait; then fly!"
    assert mapped.order == []


def test_stripping_a_marker_leaves_no_double_space():
    assert map_markers("Herons [4] wait.", 2).text == "Herons wait."


def test_text_without_markers_is_unchanged():
    mapped = map_markers("No claim here.", 3)

    assert mapped.text == "No claim here."
    assert mapped.order == []


def test_a_repeated_marker_separated_by_a_space_is_kept_once():
    assert map_markers("Claim [1] [1].", 1).text == "Claim [1]."


def test_spaces_away_from_markers_are_left_as_written():
    text = (
        "Files inside of the .git/ directory hold the index [1]. Run find . -name foo [1].\n"
        "```\n    indented  code\n```"
    )

    assert map_markers(text, 1).text == text


def test_a_kept_marker_closes_up_to_the_punctuation_after_it():
    mapped = map_markers("Herons fish [1] , and wait [2] .", 2)

    assert mapped.text == "Herons fish [1], and wait [2]."
