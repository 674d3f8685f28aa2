"""The app's pages (wired in ``app.py`` with ``st.navigation``) and the helpers that draw grader records."""
