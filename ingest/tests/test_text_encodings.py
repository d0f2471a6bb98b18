from ingest.loaders import load_passages, text

RUSSIAN = "Привет! Это тестовый документ на русском языке о погоде в Москве."
JAPANESE = "これは日本語のテスト文書です。東京は日本の首都であり、人口が多い都市です。"


def test_utf8_is_read_without_a_guess(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes("Grüße aus Köln".encode())

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == "Grüße aus Köln"
    assert loaded.reader == "text file (utf-8)"


def test_a_legacy_cyrillic_file_is_detected_and_the_guess_is_said(tmp_path):
    path = tmp_path / "ru.txt"
    path.write_bytes(RUSSIAN.encode("cp1251"))

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == RUSSIAN
    assert "a guess" in loaded.reader and "cp1251" in loaded.reader


def test_a_shift_jis_file_is_detected(tmp_path):
    path = tmp_path / "ja.txt"
    path.write_bytes(JAPANESE.encode("shift_jis"))

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == JAPANESE
    assert "a guess" in loaded.reader


def test_random_bytes_never_raise():
    decoded = text.decode_text(bytes(range(128, 256)) * 3)
    assert decoded.guessed
    assert isinstance(decoded.text, str)


def test_a_latin_1_file_is_labelled_latin_1(tmp_path):
    german = "Grüße aus Köln, schöne Straße. Das Mädchen aß Äpfel und Brötchen."
    path = tmp_path / "de.txt"
    path.write_bytes(german.encode("latin-1"))

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == german
    assert loaded.reader == "text file (encoding not declared; read as latin-1, a guess)"


def test_windows_quotes_make_it_cp1252(tmp_path):
    german = "„Grüße aus Köln“ – schöne Straße. Das Mädchen aß Äpfel und Brötchen."
    path = tmp_path / "de.txt"
    path.write_bytes(german.encode("cp1252"))

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == german
    assert "read as cp1252, a guess" in loaded.reader


def test_a_central_european_file_keeps_its_encoding(tmp_path):
    czech = "Příliš žluťoučký kůň úpěl ďábelské ódy. Čeština je krásný jazyk, řekl učitel."
    path = tmp_path / "cs.txt"
    path.write_bytes(czech.encode("cp1250"))

    loaded = load_passages("text", path)

    assert loaded.passages[0].text == czech
    assert "read as cp1250, a guess" in loaded.reader
